import t from 'tap'
import { Registry } from 'prom-client'
import { instrument } from '../../plugins/metrics/metrics.js'
import { publishOutbound } from '../../src/delivery/outbound-channels.js'

t.test('the delivery worker\'s channels feed the outbound metrics, by endpoint and event type', async (t) => {
  const registry = new Registry()
  const stop = instrument(registry)
  t.teardown(stop)
  publishOutbound('delivered', () => ({ endpointId: 'ep_1', eventType: 'invoice.paid', outcome: 'success', durationMs: 120 }))
  publishOutbound('delivered', () => ({ endpointId: 'ep_1', eventType: 'invoice.paid', outcome: 'timeout', durationMs: 10_000 }))
  publishOutbound('endpointDisabled', () => ({ endpointId: 'ep_2', reason: 'gone' }))
  publishOutbound('circuit', () => ({ endpointId: 'ep_3', open: true }))
  const text = await registry.metrics()
  t.match(text, /anvil_outbound_deliveries_total\{endpoint="ep_1",event_type="invoice.paid",outcome="success"\} 1/)
  t.match(text, /anvil_outbound_deliveries_total\{endpoint="ep_1",event_type="invoice.paid",outcome="timeout"\} 1/)
  t.match(text, /anvil_outbound_delivery_duration_seconds_count\{endpoint="ep_1",event_type="invoice.paid"\} 2/)
  t.match(text, /anvil_outbound_delivery_duration_seconds_bucket\{le="0.25",endpoint="ep_1",event_type="invoice.paid"\} 1/)
  t.match(text, /anvil_outbound_endpoint_disabled_total\{endpoint="ep_2"\} 1/)
  t.match(text, /anvil_outbound_circuit_open\{endpoint="ep_3"\} 1/)
  publishOutbound('circuit', () => ({ endpointId: 'ep_3', open: false }))
  t.match(await registry.metrics(), /anvil_outbound_circuit_open\{endpoint="ep_3"\} 0/)
  stop()
  publishOutbound('endpointDisabled', () => ({ endpointId: 'ep_2', reason: 'gone' }))
  t.match(await registry.metrics(), /anvil_outbound_endpoint_disabled_total\{endpoint="ep_2"\} 1/, 'unsubscribed on stop')
})
