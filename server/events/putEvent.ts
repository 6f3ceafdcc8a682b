import type { z } from "zod";
import { config } from "../config";
import { type Database, type Db, sqlIn } from "../db/client";
import type { Event, EventMatch, Prisma, Subscription } from "../db/generated/sqlite/client";
import { sqliteTimestamp } from "../db/raw";
import { domainError } from "../errors";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import type { PendingRecord } from "../provenance/appendProvenance";
import { dispatcherFor, type DispatchOutcome } from "./dispatch";
import { subscriptionIndex } from "./matcher";
import { SUBSCRIPTION_COLUMNS, subscriptionFromRow } from "./subscriptionRows";
import type { EventBody } from "./schemas";

export type EventVia = "ingest" | "emit";

/** What putting an event on the bus needs from the governed call it runs in. */
export interface BusScope {
  db: Db;
  database: Pick<Database, "engine">;
  principal: Principal;
  requestId: string;
  setResource(id: string | null, type?: string): void;
  onRecord(fn: (tx: Db, record: PendingRecord) => Promise<void>): void;
}

export interface EventAnswer {
  event_id: string;
  matched_subscriptions: number;
  queued_executions: number;
  /** A repeated sender id: the first answer again, nothing dispatched. */
  replayed: boolean;
}

/**
 * Puts one event on the organization's bus, in the call's transaction: the event, what it
 * matched, and the executions and deliveries it queued commit with the call's provenance record,
 * or none of them does. Dispatch waits for that record (`onRecord`) so each trigger run's input
 * and each delivery can name the record and its leaf index. A sender id seen before answers the
 * first answer and dispatches nothing. `depth` counts the trigger runs between this event and one
 * that came from outside; reaching SVC_EVENT_MAX_DEPTH is refused (a denied record).
 */
export async function putEvent(
  scope: BusScope,
  body: z.output<typeof EventBody>,
  via: EventVia,
  depth = 0,
  rootEventId: string | null = null,
): Promise<EventAnswer> {
  const { db: tx, database, principal } = scope;
  const max = config().eventMaxDepth;
  if (depth >= max) {
    throw domainError(
      "event_depth_exceeded",
      `This event would be number ${depth + 1} in a chain of events and the agent runs they triggered; chains stop at ${max} (SVC_EVENT_MAX_DEPTH).`,
      { depth, max_depth: max },
    );
  }
  if (body.id !== undefined) {
    // Two concurrent calls with one sender id: the second waits here and then finds the first.
    if (database.engine === "postgresql")
      await tx.$queryRawUnsafe(
        `SELECT pg_advisory_xact_lock(hashtext($1))::text`,
        `event:${principal.orgDid}:${body.id}`,
      );
    const seen = await tx.event.findUnique({
      where: { orgDid_senderId: { orgDid: principal.orgDid, senderId: body.id } },
      select: { id: true, answer: true },
    });
    if (seen) {
      scope.setResource(seen.id, "event");
      // Rebuilt in the answer's own order: PostgreSQL's jsonb does not keep the stored key order.
      const first = seen.answer as unknown as EventAnswer;
      return {
        event_id: first.event_id,
        matched_subscriptions: first.matched_subscriptions,
        queued_executions: first.queued_executions,
        replayed: true,
      };
    }
  }
  await subscriptionIndex.refresh(tx, database.engine);
  const candidates = subscriptionIndex.match(principal.orgDid, body.type);
  // The index may be up to one refresh old: the rows, read in this transaction, have the last word.
  const subscriptions =
    candidates.length === 0 ? [] : await activeSubscriptions(tx, database.engine, principal.orgDid, candidates);
  const id = newId("evt");
  if (principal.delegationId)
    await assertFanout(tx, rootEventId, subscriptions.filter((s) => s.kind === "agent_trigger").length);
  const answer: EventAnswer = {
    event_id: id,
    matched_subscriptions: subscriptions.length,
    queued_executions: subscriptions.filter((s) => s.kind === "agent_trigger").length,
    replayed: false,
  };
  scope.setResource(id, "event");
  // The row is written once its record exists, so it carries the record (and, where the engine
  // gives it at commit, its place in the ledger) from the start: an INSERT, not an INSERT and then
  // an UPDATE.
  scope.onRecord(async (rtx, record) => {
    const now = new Date();
    const event: Event = {
      id,
      orgDid: principal.orgDid,
      type: body.type,
      payload: (body.payload ?? {}) as Prisma.JsonValue,
      senderId: body.id ?? null,
      source: body.source ?? null,
      occurredAt: body.occurred_at ? new Date(body.occurred_at) : now,
      ingestedVia: via,
      actorDid: principal.actorDid,
      delegationId: principal.delegationId || null,
      provenanceId: record.id,
      // Known at commit on SQLite; on PostgreSQL the integrator gives it after commit
      // (ledger/integrate.ts) and readers look it up by the record's id.
      provenanceSeq: record.seq === undefined ? null : BigInt(record.seq),
      requestId: scope.requestId,
      depth,
      rootEventId,
      answer: answer as unknown as Prisma.JsonValue,
      createdAt: now,
    };
    await insertEvent(rtx, event);
    const matches: {
      eventId: string;
      subscriptionId: string;
      executionId: string | null;
      deliveryId: string | null;
    }[] = [];
    for (const subscription of subscriptions) {
      const outcome: DispatchOutcome | void = await dispatcherFor(subscription.kind)?.(rtx, {
        event,
        subscription,
        principal,
      });
      matches.push({
        eventId: id,
        subscriptionId: subscription.id,
        executionId: outcome?.executionId ?? null,
        deliveryId: outcome?.deliveryId ?? null,
      });
    }
    if (matches.length > 0) await insertMatches(rtx, matches);
  });
  return answer;
}

/**
 * The organization's active subscriptions among `ids`, by id, read as raw SQL in the call's
 * transaction (Prisma's model read was the largest single cost left on ingest). Every column, as
 * Prisma would return them: dispatchers get the whole row.
 */
async function activeSubscriptions(
  tx: Db,
  engine: Database["engine"],
  orgDid: string,
  ids: string[],
): Promise<Subscription[]> {
  const rows = await sqlIn(tx, engine).query<Record<string, unknown>>(
    `SELECT ${SUBSCRIPTION_COLUMNS}
       FROM "subscription" WHERE "id" IN (${ids.map((_, i) => `$${i + 2}`).join(",")}) AND "org_did" = $1 AND "status" = 'active' ORDER BY "id"`,
    [orgDid, ...ids],
  );
  return rows.map(subscriptionFromRow);
}

// Ingest's two inserts as raw SQL through the call's transaction: each about a third of the CPU of
// Prisma's create/createMany, on the path that must take 1,000 events a second. Stored as Prisma
// stores them: timestamps as ISO 8601 text on SQLite, JSON as text (jsonb on PostgreSQL).
const jsonParam = (engine: string, n: number) => (engine === "postgresql" ? `$${n}::jsonb` : `$${n}`);

const stamp = (engine: string, d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);

async function insertEvent(tx: Db, e: Event): Promise<void> {
  const engine = config().engine;
  await sqlIn(tx, engine).execute(
    `INSERT INTO "event" ("id","org_did","type","payload","sender_id","source","occurred_at","ingested_via","actor_did","delegation_id","provenance_id","provenance_seq","request_id","depth","root_event_id","answer","created_at")
       VALUES ($1,$2,$3,${jsonParam(engine, 4)},$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,${jsonParam(engine, 16)},$17)`,
    [
      e.id,
      e.orgDid,
      e.type,
      JSON.stringify(e.payload),
      e.senderId,
      e.source,
      stamp(engine, e.occurredAt),
      e.ingestedVia,
      e.actorDid,
      e.delegationId,
      e.provenanceId,
      e.provenanceSeq === null ? null : Number(e.provenanceSeq),
      e.requestId,
      e.depth,
      e.rootEventId,
      JSON.stringify(e.answer),
      stamp(engine, e.createdAt),
    ],
  );
}

async function insertMatches(tx: Db, matches: Omit<EventMatch, "createdAt">[]): Promise<void> {
  const engine = config().engine;
  const now = stamp(engine, new Date());
  const params: unknown[] = [now];
  const rows = matches.map((m) => {
    params.push(m.eventId, m.subscriptionId, m.executionId, m.deliveryId);
    const n = params.length;
    return `($${n - 3},$${n - 2},$${n - 1},$${n},$1)`;
  });
  await sqlIn(tx, engine).execute(
    `INSERT INTO "event_match" ("event_id","subscription_id","execution_id","delivery_id","created_at") VALUES ${rows.join(",")}`,
    params,
  );
}

/**
 * Bounds an organization's trigger fan-out per event from outside: the trigger runs this event
 * would queue, plus those its chain (the root event and every event descending from it) already
 * queued, stay within SVC_EVENT_MAX_FANOUT, or the event is refused.
 */
async function assertFanout(tx: Db, rootEventId: string | null, starting: number): Promise<void> {
  if (starting === 0) return;
  const max = config().eventMaxFanout;
  const already = rootEventId
    ? await tx.eventMatch.count({
        where: { executionId: { not: null }, event: { OR: [{ id: rootEventId }, { rootEventId }] } },
      })
    : 0;
  if (already + starting > max) {
    throw domainError(
      "event_fanout_exceeded",
      `This event would start ${starting} trigger run(s) where its chain from one event from outside already started ${already}; one such event may start at most ${max} (SVC_EVENT_MAX_FANOUT).`,
      { max_fanout: max, already_started: already, would_start: starting },
    );
  }
}
