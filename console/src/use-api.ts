import { useCallback, useEffect, useState } from 'preact/hooks'
import { api, ApiError } from './api'

export interface Loaded<T> { data?: T, error?: ApiError | Error, loading: boolean, reload: () => void }

/** How often a page asks again while something it shows is in flight. */
export const REFRESH_MS = 1500

/** GET `path` (again whenever it changes, or on reload(), and every REFRESH_MS while `refresh` holds for the data). */
export function useApi<T> (path: string | null, refresh?: (data: T) => boolean): Loaded<T> {
  const [state, setState] = useState<{ data?: T, error?: ApiError | Error, loading: boolean }>({ loading: path !== null })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    if (path === null) return
    let live = true
    setState((previous) => ({ ...previous, loading: true }))
    api<T>('GET', path).then(
      (data) => { if (live) setState({ data, loading: false }) },
      (error: Error) => { if (live) setState({ error, loading: false }) }
    )
    return () => { live = false }
  }, [path, tick])
  const reload = useCallback(() => setTick((n) => n + 1), [])
  const inFlight = state.data !== undefined && !state.loading && refresh?.(state.data) === true
  useEffect(() => {
    if (!inFlight) return
    const timer = setTimeout(reload, REFRESH_MS)
    return () => clearTimeout(timer)
  }, [inFlight, state.data])
  return { ...state, reload }
}
