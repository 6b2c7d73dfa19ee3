// Typed GitHub handlers: names are `<event>` or `<event>.<action>` as GitHub sends them (X-GitHub-Event and the
// body's `action`), and `event.data` is the body from @octokit/openapi-webhooks-types (JSON without it).
// Also a handler module: `anvil worker --handler dist/examples/github-handlers.js`.
import { createRouter, type RoutedEvent, type Router } from '../index.js'
import type { Report } from './stripe-handlers.js'

export function onPullRequestOpened (report: Report) {
  return async (event: RoutedEvent<'github:pull_request.opened'>): Promise<void> => {
    const pr = event.data.pull_request
    report({ review: pr.number, title: pr.title, author: pr.user.login, repository: event.data.repository.full_name })
  }
}

export function createGithubRouter (report: Report = (fields) => { console.log(JSON.stringify(fields)) }): Router {
  return createRouter()
    .on('github:pull_request.opened', onPullRequestOpened(report))
    // Every pull_request action, after the more specific handler above.
    .on('github:pull_request', (event) => { report({ pullRequest: event.data.number, action: event.data.action }) })
    .on('github:push', (event) => { report({ pushed: event.data.ref, commits: event.data.commits.length }) })
    .on('github:issues.opened', (event) => { report({ triage: event.data.issue.number, labels: event.data.issue.labels?.map((label) => label.name) }) })
}

export default createGithubRouter()
