import type { Database, Db } from "../db/client";
import type { Subscription } from "../db/generated/sqlite/client";
import { subscriptionsChanged } from "../events/matcher";
import { newId } from "../ids";
import { appendInTransaction } from "../provenance/appendProvenance";
import { requestHash } from "../provenance/record";

export type DisabledReason = "gone" | "failing" | "delegation_revoked";

/**
 * Stops deliveries to a webhook (queued attempts find it disabled and send nothing) and puts a
 * platform event `webhook.disabled` on the organization's bus, with a provenance record, in the
 * same transaction.
 */
export async function disableWebhook(tx: Db, engine: Database["engine"], s: Subscription, reason: DisabledReason): Promise<void> {
  const { count } = await tx.subscription.updateMany({ where: { id: s.id, status: "active" }, data: { status: "disabled", disabledReason: reason } });
  if (count === 0) return;
  await subscriptionsChanged(tx);
  const id = newId("evt");
  const payload = { webhook_id: s.id, target_url: s.targetUrl, reason, failing_since: s.failingSince?.toISOString() ?? null };
  const record = await appendInTransaction(tx, engine, {
    org_did: s.orgDid,
    actor_did: s.orgDid,
    delegation_id: null,
    grantor_did: s.orgDid,
    capability: null,
    operation: "EMIT webhook.disabled",
    resource_type: "event",
    resource_id: id,
    decision: "allowed",
    status: 202,
    request_hash: requestHash(payload),
    request_id: id,
  });
  // Recorded on the bus (GET /v1/events lists it) but not dispatched: the bus's putEvent runs
  // inside a governed call and dispatches under the caller's principal (a trigger run derives its
  // delegation from it), and a background disable has no such caller (after a revocation, not
  // even a valid creator). Dispatching platform events needs a service principal on the bus.
  await tx.event.create({
    data: {
      id,
      orgDid: s.orgDid,
      type: "webhook.disabled",
      payload,
      source: "svc",
      occurredAt: new Date(),
      ingestedVia: "emit",
      actorDid: s.orgDid,
      provenanceId: record.id,
      provenanceSeq: BigInt(record.seq),
      requestId: id,
      answer: { event_id: id, matched_subscriptions: 0, queued_executions: 0 },
    },
  });
}
