import { useEffect, useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, EventId, Loading, Status, Time, hasProviderId, text } from '../components'
import { href } from '../router'
import { CardTable } from '../card-table'
import { useApi } from '../use-api'
import type { Change, EventAttempt, EventDetail } from '../../../src/event-log/event-detail'

function Attempts ({ attempts }: { attempts: EventAttempt[] }) {
  return (
    <section aria-labelledby='attempts-title'>
      <h2 id='attempts-title'>Attempts</h2>
      {attempts.length === 0 ? <p>None recorded.</p> : (
        <CardTable testId='attempts'>
          <thead><tr><th scope='col'>#</th><th scope='col'>Status</th><th scope='col'>Started</th><th scope='col'>Finished</th><th scope='col'>Error</th><th scope='col'>Job</th></tr></thead>
          <tbody>{attempts.map((a, i) => (
            <tr key={i}>
              <td data-label='#'>{a.attempt}</td><td data-label='Status'><Status value={a.status} /></td><td data-label='Started'><Time value={a.startedAt} /></td>
              <td data-label='Finished'><Time value={a.finishedAt} /></td><td data-label='Error'>{a.errorClass !== null ? `${a.errorClass}: ` : ''}{a.error ?? (a.errorClass === null ? '—' : '')}</td>
              <td data-label='Job'><code class='raw'>{a.jobId ?? '—'}</code></td>
            </tr>
          ))}</tbody>
        </CardTable>
      )}
    </section>
  )
}

/** Header names whose values are credentials: never shown, even if the server sent them. */
const CREDENTIAL = /authorization|cookie|signature|secret|token|api[-_]?key|password/i
const DONE = 'done'

function Payload ({ event }: { event: EventDetail }) {
  const [raw, setRaw] = useState(false)
  const pretty = event.json !== undefined && !raw ? JSON.stringify(event.json, null, 2) : event.payload
  return (
    <section aria-labelledby='payload-title'>
      <h2 id='payload-title'>Payload</h2>
      {event.json !== undefined && (
        <label class='toggle'><input type='checkbox' checked={raw} onChange={() => setRaw(!raw)} /> Raw bytes{event.payloadEncoding === 'base64' ? ' (base64)' : ''}</label>
      )}
      {/* Text only: a payload holding markup shows as characters. */}
      <pre class='payload' data-testid='payload' tabIndex={0}>{pretty}</pre>
    </section>
  )
}

/** A changed credential header shows that it changed, never its values (as in the headers table). */
const redacted = (c: Change): Partial<Change> => CREDENTIAL.test(c.path)
  ? { before: c.before === undefined ? undefined : '[redacted]', after: c.after === undefined ? undefined : '[redacted]' }
  : {}

function Diff ({ diff }: { diff: NonNullable<EventDetail['previousDelivery']> }) {
  return (
    <section aria-labelledby='diff-title'>
      <h2 id='diff-title'>Changed since the previous delivery of this id</h2>
      {diff.changes.length === 0 && diff.payloadChanged && <p>The bytes changed (not JSON on both sides).</p>}
      <table>
        <thead><tr><th scope='col'>Field</th><th scope='col'>Before</th><th scope='col'>After</th></tr></thead>
        <tbody>{[...diff.changes, ...diff.headers.map((c) => ({ ...c, ...redacted(c), path: `header ${c.path}` }))].map((c) => (
          <tr key={c.path}><th scope='row'>{c.path}</th><td><code class='raw'>{text(c.before)}</code></td><td><code class='raw'>{text(c.after)}</code></td></tr>
        ))}</tbody>
      </table>
    </section>
  )
}

export function EventPage ({ id }: { id: string }) {
  const path = `/events/${encodeURIComponent(id)}`
  const event = useApi<EventDetail>(path)
  const [replay, setReplay] = useState<{ state: 'sent' | 'error', message: string } | null>(null)
  const [watching, setWatching] = useState(false)
  // After a replay, look again each second (for a minute at most) until it is done, so the page shows it turn done.
  useEffect(() => {
    if (!watching) return
    const timer = setInterval(event.reload, 1000)
    const stop = setTimeout(() => setWatching(false), 60_000)
    return () => { clearInterval(timer); clearTimeout(stop) }
  }, [watching])
  useEffect(() => {
    if (watching && event.data?.status === DONE) setWatching(false)
  }, [event.data])
  const doReplay = (): void => {
    setReplay(null)
    api<Record<string, unknown>>('POST', `${path}/replay`).then(
      (answer) => { setReplay({ state: 'sent', message: `Replayed: ${text(answer.jobId ?? answer.id ?? 'queued')}` }); setWatching(true); event.reload() },
      (error: Error) => setReplay({ state: 'error', message: error.message })
    )
  }
  return (
    <>
      <p><a href={href('/events')}>← Events</a></p>
      <h1>{event.data?.eventType ?? 'Event'}{hasProviderId(id) && <> <code class='id'>{id}</code></>}</h1>
      <Loading loaded={event} feature='journal'>{(e) => (
        <>
          <dl class='facts'>
            <dt>Status</dt><dd data-testid='event-status'><Status value={e.status} /></dd>
            <dt>Provider's event id</dt><dd><EventId id={e.id} /></dd>
            {!hasProviderId(e.id) && <><dt>Journal key</dt><dd><code class='raw'>{e.id}</code></dd></>}
            <dt>Source</dt><dd>{e.source}</dd>
            <dt>Provider</dt><dd>{e.provider ?? '—'}</dd>
            <dt>Type</dt><dd>{e.eventType ?? '—'}</dd>
            <dt>Received</dt><dd><Time value={e.receivedAt} /></dd>
            <dt>Attempts</dt><dd>{e.attempts}</dd>
            <dt>Last error</dt><dd>{e.errorClass !== undefined ? `${e.errorClass}: ` : ''}{e.lastError ?? '—'}</dd>
          </dl>
          <div class='actions'>
            <button type='button' onClick={doReplay}>Replay</button>
            {replay !== null && <p role='status' class={replay.state === 'error' ? 'error' : 'ok'}>{replay.message}</p>}
          </div>
          {e.attemptLog !== undefined && <Attempts attempts={e.attemptLog} />}
          <Payload event={e} />
          <section aria-labelledby='headers-title'>
            <h2 id='headers-title'>Headers</h2>
            <table><tbody>{Object.entries(e.headers).map(([name, value]) => (
              <tr key={name}><th scope='row'>{name}</th><td><code class='raw'>{CREDENTIAL.test(name) ? '[redacted]' : value}</code></td></tr>
            ))}</tbody></table>
          </section>
          <section aria-labelledby='effects-title'>
            <h2 id='effects-title'>Effects</h2>
            {e.effects.length === 0 ? <p>None recorded.</p> : (
              <CardTable>
                <thead><tr><th scope='col'>Action</th><th scope='col'>Key</th><th scope='col'>Result</th><th scope='col'>At</th></tr></thead>
                <tbody>{e.effects.map((f) => (
                  <tr key={f.key}>
                    <td data-label='Action'>{f.action}</td><td data-label='Key'><code class='raw'>{f.key}</code></td>
                    <td data-label='Result'><code class='raw'>{text(f.result)}</code></td><td data-label='At'><Time value={f.createdAt} /></td>
                  </tr>
                ))}</tbody>
              </CardTable>
            )}
          </section>
          {e.previousDelivery !== undefined && <Diff diff={e.previousDelivery} />}
        </>
      )}</Loading>
      {event.error !== undefined && event.data !== undefined && <ErrorNote error={event.error} />}
    </>
  )
}
