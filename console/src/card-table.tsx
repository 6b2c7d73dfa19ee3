// A table whose columns do not fit its box becomes one card per row (each cell labelled by its `data-label`), so
// nothing scrolls sideways at any width: in a phone, an 860 px frame or beside a panel. Measured, not a fixed
// breakpoint: a two-column table stays a table where a nine-column one cannot.
import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'

export function CardTable ({ children, class: className, testId }: { children: ComponentChildren, class?: string, testId?: string }) {
  const box = useRef<HTMLDivElement>(null)
  const [cards, setCards] = useState(false)
  /** The table's width as a table, measured the last time it was one (its cells at their narrowest when it did not fit). */
  const natural = useRef(0)
  const check = useRef(() => {})
  check.current = () => {
    const host = box.current
    const table = host?.firstElementChild as HTMLElement | null | undefined
    if (host == null || table == null) return
    if (!table.classList.contains('as-cards')) natural.current = table.getBoundingClientRect().width
    setCards(natural.current > host.getBoundingClientRect().width + 0.5)
  }
  useLayoutEffect(() => {
    const observer = new ResizeObserver(() => check.current())
    if (box.current !== null) observer.observe(box.current)
    return () => observer.disconnect()
  }, [])
  // After each render too: new rows may not fit where the old ones did.
  useLayoutEffect(() => check.current())
  return (
    <div class='table-box' ref={box}>
      <table class={[className, cards ? 'as-cards' : ''].filter(Boolean).join(' ')} data-testid={testId}>{children}</table>
    </div>
  )
}
