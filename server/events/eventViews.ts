import { type Db } from "../db/client";
import { leafIndexes } from "../ledger/integrate";
import type { Event, EventMatch } from "../db/generated/sqlite/client";
import type { EventVia } from "./putEvent";

/** An event row with its matches, as the list and the get read it. */
export type EventWithMatches = Event & { matches: EventMatch[] };

/** Events as the API shows them, each match naming its subscription's kind and agent (one read for all the rows' subscriptions). */
export async function eventViews(db: Db, rows: EventWithMatches[]) {
  const ids = [...new Set(rows.flatMap((r) => r.matches.map((m) => m.subscriptionId)))];
  const subs =
    ids.length === 0
      ? []
      : await db.subscription.findMany({ where: { id: { in: ids } }, select: { id: true, kind: true, agentId: true } });
  const byId = new Map(subs.map((s) => [s.id, s]));
  // An event's record gets its position after the event commits (ledger/integrate.ts): look it up.
  const leaves = await leafIndexes(
    db,
    rows.flatMap((r) => (r.provenanceSeq === null && r.provenanceId ? [r.provenanceId] : [])),
  );
  return rows.map((e) => ({
    id: e.id,
    type: e.type,
    payload: e.payload as Record<string, unknown>,
    sender_id: e.senderId,
    source: e.source,
    occurred_at: e.occurredAt.toISOString(),
    via: e.ingestedVia as EventVia,
    actor: e.actorDid,
    delegation_id: e.delegationId,
    provenance_record_id: e.provenanceId,
    leaf_index: e.provenanceSeq !== null ? Number(e.provenanceSeq) : (leaves.get(e.provenanceId ?? "") ?? null),
    depth: e.depth,
    created_at: e.createdAt.toISOString(),
    matches: e.matches.map((m) => {
      const s = byId.get(m.subscriptionId);
      return {
        subscription_id: m.subscriptionId,
        kind: (s?.kind ?? null) as "webhook" | "agent_trigger" | null,
        agent_id: s?.agentId ?? null,
        execution_id: m.executionId,
        delivery_id: m.deliveryId,
      };
    }),
  }));
}
