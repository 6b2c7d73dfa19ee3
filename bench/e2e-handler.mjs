// The end-to-end bench's handler for `anvil worker --handler`: at its start, how long ago the event was sent
// (`sentAt` in the body, from the generator's process). Samples go to the bench over the fork's IPC channel in
// batches, so reporting them costs the handler nothing measurable.
// performance.timeOrigin + performance.now() is wall time with sub-ms resolution, comparable across processes
// on one machine.
const now = () => performance.timeOrigin + performance.now()
let batch = []

export default function handler (event) {
  const startedAt = now()
  const { id, sentAt } = event.json()
  batch.push([id, startedAt - sentAt])
}

setInterval(() => {
  if (batch.length === 0 || process.send === undefined) return
  process.send(batch)
  batch = []
}, 50).unref()
