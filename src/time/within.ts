/**
 * The promise's outcome, or `expired()`'s (a value, or a throw) once `ms` pass first. The timer is cleared
 * either way and, unless `ref` is set, never keeps the process alive.
 */
export async function within<T, E> (promise: Promise<T>, ms: number, expired: () => E, { ref = false } = {}): Promise<T | E> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<E>((resolve, reject) => {
    timer = setTimeout(() => {
      try { resolve(expired()) } catch (err) { reject(err) }
    }, ms)
    if (!ref) timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
