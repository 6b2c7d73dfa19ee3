import { useState } from 'preact/hooks'
import { CopyButton } from '../components'
// The receivers' recipes exactly as docs/outgoing-webhooks.md gives them, taken from the page at build time
// (console/vite.config.ts): test/outbound/verify-docs.test.ts runs those very blocks against real deliveries, so
// there is one algorithm, written and tested once.
import recipes from 'virtual:verify-recipes'

const LANGUAGES = [
  {
    name: 'Node', file: 'verify-webhook.mjs', code: recipes.Node,
    call: 'verifyWebhook(process.env.WEBHOOK_SECRET, req.headers, rawBody) // rawBody: the bytes received, as a string'
  },
  {
    name: 'Python', file: 'verify_webhook.py', code: recipes.Python,
    call: 'verify_webhook(os.environ["WEBHOOK_SECRET"], {k.lower(): v for k, v in request.headers.items()}, request.get_data())  # Flask'
  },
  {
    name: 'Go', file: 'verify.go', code: recipes.Go,
    call: 'err := webhooks.Verify(os.Getenv("WEBHOOK_SECRET"), r.Header, body) // body: io.ReadAll(r.Body)'
  }
] as const

/**
 * "Verify in your code": Standard Webhooks, as every delivery to a default endpoint is signed, in Node, Python and
 * Go, each with its copy button and the line that calls it with the endpoint's secret.
 */
export function VerifyPage () {
  const [chosen, setChosen] = useState<string>('Node')
  const language = LANGUAGES.find((l) => l.name === chosen) ?? LANGUAGES[0]
  return (
    <>
      <h1>Verify in your code</h1>
      <p>
        Each delivery is signed with your endpoint’s secret (<a href='https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md' target='_blank' rel='noopener noreferrer'>Standard Webhooks</a>):
        check the signature on the raw body before you parse it, refuse a timestamp more than 5 minutes away, and
        dedupe on <code class='id'>webhook-id</code>, which is the same on every attempt. While a secret rotated out still
        signs, a delivery carries two signatures: either matches.
      </p>
      <div class='actions' role='group' aria-label='Language'>
        {LANGUAGES.map((l) => <button key={l.name} type='button' aria-pressed={l.name === chosen} onClick={() => setChosen(l.name)}>{l.name}</button>)}
      </div>
      <section aria-labelledby='snippet-title'>
        <h2 id='snippet-title'>{language.name}: <code>{language.file}</code></h2>
        <p class='actions'><CopyButton value={language.code} label={`Copy the ${language.name} code`} /></p>
        <pre class='payload' data-testid='snippet' tabIndex={0}>{language.code}</pre>
        <p>Call it with the secret shown when the endpoint was made or rotated:</p>
        <pre class='payload' tabIndex={0}>{language.call}</pre>
        {language.name === 'Node' && <p>
          Or with the <a href='https://www.npmjs.com/package/standardwebhooks' target='_blank' rel='noopener noreferrer'>standardwebhooks</a> package:
          {' '}<code>new Webhook(secret).verify(rawBody, headers)</code>, which also refuses a stale timestamp.
        </p>}
      </section>
    </>
  )
}
