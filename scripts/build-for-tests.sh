#!/bin/sh
# What `npm test` needs before tap: the type check, which compiles the suite into build/, and the package
# (dist/, the console, the examples) with the type tests. They write to different folders and each keeps one
# core busy, so they run side by side; this fails when either fails.
npm run typecheck &
typecheck=$!
npm run build && npm run build:examples && npm run test:types
built=$?
wait "$typecheck" && exit "$built"
