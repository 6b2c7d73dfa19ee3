import { useEffect, useState } from 'preact/hooks'
import { api } from '../api'
import { ErrorNote, plural } from '../components'
import type { Filter } from './events'

interface Run { id: string, matched: number, replayed: number, state: 'running' | 'done' | 'cancelled', error?: string }
type Step = { at: 'idle' } | { at: 'counting' } | { at: 'confirm', matched: number } | { at: 'running', run: Run }

/** Replay everything the filter matches: a dry run states the count, then a run with a progress bar and Cancel. */
export function BulkReplay ({ filter, onDone }: { filter: Filter, onDone: () => void }) {
  const [step, setStep] = useState<Step>({ at: 'idle' })
  const [error, setError] = useState<Error | null>(null)
  const [rate, setRate] = useState('')
  const runId = step.at === 'running' && step.run.state === 'running' ? step.run.id : null
  useEffect(() => {
    if (runId === null) return
    const timer = setInterval(() => {
      api<Run>('GET', `/events/replay/${encodeURIComponent(runId)}`).then((run) => {
        setStep({ at: 'running', run })
        if (run.state !== 'running') onDone()
      }, setError)
    }, 500)
    return () => clearInterval(timer)
  }, [runId])
  const act = (work: () => Promise<void>) => () => { setError(null); work().catch(setError) }
  const count = act(async () => {
    setStep({ at: 'counting' })
    const { matched } = await api<{ matched: number }>('POST', '/events/replay', { filter, dryRun: true })
    setStep({ at: 'confirm', matched })
  })
  const start = act(async () => {
    const ratePerSecond = rate === '' ? undefined : Number(rate)
    const started = await api<{ id: string, matched: number }>('POST', '/events/replay', { filter, ...(ratePerSecond === undefined ? {} : { ratePerSecond }) })
    setStep({ at: 'running', run: { id: started.id, matched: started.matched, replayed: 0, state: 'running' } })
  })
  const cancel = act(async () => {
    if (step.at === 'running') setStep({ at: 'running', run: await api<Run>('DELETE', `/events/replay/${encodeURIComponent(step.run.id)}`) })
  })
  return (
    <section class='bulk' aria-label='Bulk replay'>
      {(step.at === 'idle' || step.at === 'counting') && <button type='button' onClick={count} disabled={step.at === 'counting'}>Replay all matching…</button>}
      {step.at === 'confirm' && (
        <div role='alertdialog' aria-labelledby='confirm-text' class='confirm'>
          <p id='confirm-text'>Replay {plural(step.matched, 'event')} matched by this filter?</p>
          <label class='field'><span>At most this many per second (empty: as fast as it goes)</span>
            <input type='number' min='1' name='ratePerSecond' value={rate} onInput={(e) => setRate((e.target as HTMLInputElement).value)} /></label>
          <button type='button' onClick={start} disabled={step.matched === 0}>Replay {plural(step.matched, 'event')}</button>
          <button type='button' onClick={() => setStep({ at: 'idle' })}>Cancel</button>
        </div>
      )}
      {step.at === 'running' && (
        <div class='progress'>
          <label for='replay-progress'>Replayed {step.run.replayed} of {step.run.matched}: {step.run.state}</label>
          <progress id='replay-progress' max={Math.max(1, step.run.matched)} value={step.run.replayed} />
          {step.run.state === 'running'
            ? <button type='button' onClick={cancel}>Cancel replay</button>
            : <button type='button' onClick={() => setStep({ at: 'idle' })}>Close</button>}
          {step.run.error !== undefined && <p class='error'>{step.run.error}</p>}
        </div>
      )}
      {error !== null && <ErrorNote error={error} />}
    </section>
  )
}
