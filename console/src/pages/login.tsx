import { useState } from 'preact/hooks'
import { api, ApiError, setCsrf } from '../api'
import type { SessionAnswer } from '../../../plugins/admin/session-state'

/** The token is entered once; the server answers with an HttpOnly session cookie and a CSRF token. */
export function Login ({ onLogin }: { onLogin: () => void }) {
  const [token, setToken] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const answer = await api<SessionAnswer>('POST', '/session', { token })
      setCsrf(answer.csrfToken)
      setToken('')
      onLogin()
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0
      setError(status === 401 ? 'Wrong token.' : status === 429 ? `${(err as Error).message}.` : (err as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class='login'>
      <h1>Anvil console</h1>
      <form onSubmit={submit}>
        <label class='field'>
          <span>Admin token</span>
          <input type='password' name='token' autocomplete='current-password' required value={token}
            onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        </label>
        <button type='submit' disabled={busy}>Log in</button>
        {error !== null && <p class='error' role='alert'>{error}</p>}
      </form>
    </main>
  )
}
