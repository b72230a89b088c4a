// The event outbox as the tests read it: through the webhook router's own read
// (WebhooksStore.routeEvents), each row routed to no webhook and kept here per store,
// so that a test sees every row written so far, however often it asks.
import type { QueuedEvent, Store } from '../../server/src/store/index.js';

const routed = new WeakMap<Store, QueuedEvent[]>();

/** Every outbox row `store` has been written, oldest first. */
export async function outbox(store: Store): Promise<QueuedEvent[]> {
  const seen = routed.get(store) ?? [];
  routed.set(store, seen);
  while ((await store.webhooks.routeEvents(1_000, Date.now(), (event) => (seen.push(event), []))) > 0);
  return seen;
}
