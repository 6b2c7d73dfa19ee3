import type { DeliveryAttempt, DeliveryStore, EndpointState } from '../../src/outbound/delivery/delivery-job.js'

/** A delivery store held in memory, as the database's would behave: attempts kept, failingSince tracked. */
export class MemoryDeliveryStore implements DeliveryStore {
  readonly endpoints = new Map<string, EndpointState & { failingSince: Date | null, disabledReason?: string }>()
  readonly attempts: DeliveryAttempt[] = []

  add (id: string, secrets: string[], extra: Partial<EndpointState & { failingSince: Date | null }> = {}): void {
    this.endpoints.set(id, { enabled: true, rateLimit: null, secrets, failingSince: null, ...extra })
  }

  async loadSecrets (endpointId: string): Promise<string[]> {
    return this.endpoints.get(endpointId)?.secrets ?? []
  }

  async loadEndpoint (endpointId: string): Promise<EndpointState | undefined> {
    const endpoint = this.endpoints.get(endpointId)
    return endpoint === undefined ? undefined : { enabled: endpoint.enabled, rateLimit: endpoint.rateLimit, secrets: endpoint.secrets }
  }

  async recordAttempt (attempt: DeliveryAttempt): Promise<{ failingSince: Date | null }> {
    this.attempts.push({ ...attempt, at: Date.now() } as DeliveryAttempt)
    const endpoint = this.endpoints.get(attempt.endpointId)
    if (endpoint === undefined) return { failingSince: null }
    endpoint.failingSince = attempt.success ? null : endpoint.failingSince ?? new Date()
    return { failingSince: endpoint.failingSince }
  }

  async disableEndpoint (endpointId: string, reason: string): Promise<boolean> {
    const endpoint = this.endpoints.get(endpointId)
    if (endpoint === undefined || !endpoint.enabled) return false
    endpoint.enabled = false
    endpoint.disabledReason = reason
    return true
  }

  attemptsOf (endpointId: string): Array<DeliveryAttempt & { at: number }> {
    return this.attempts.filter((attempt) => attempt.endpointId === endpointId) as Array<DeliveryAttempt & { at: number }>
  }
}
