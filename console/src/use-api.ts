import { useCallback, useEffect, useState } from 'preact/hooks'
import { api, ApiError } from './api'

export interface Loaded<T> { data?: T, error?: ApiError | Error, loading: boolean, reload: () => void }

/** GET `path` (again whenever it changes, or on reload()). */
export function useApi<T> (path: string | null): Loaded<T> {
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
  return { ...state, reload }
}
