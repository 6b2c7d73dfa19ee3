// The receivers' verification recipes of docs/outgoing-webhooks.md, taken from the page at build time
// (console/vite.config.ts): the blocks themselves, by language.
declare module 'virtual:verify-recipes' {
  const recipes: Record<'Node' | 'Python' | 'Go', string>
  export default recipes
}
