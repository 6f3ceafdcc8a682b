import { config } from "../config";
import type { Event, Subscription, WebhookDelivery } from "../db/generated/sqlite/client";
import { rawDate, rawJson, sqliteTimestamp, type RawQueryable } from "../db/raw";
import { afterCommit, database, type Database, type Db, sqlIn } from "../db/client";
import { readSubscription } from "../events/subscriptionRows";
import { delegationStanding } from "../identity/delegationRevoked";
import { newId } from "../ids";
import { awaitIntegrated } from "../ledger/integrate";
import { enqueue, finishJob, retryJob, type ClaimedJob, type EnqueueOptions } from "../jobs";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { deliveryRecord, sendSignedPost } from "../signing/signedPost";
import { commitGrouped } from "../db/groupCommit";
import { disableWebhook } from "./disableWebhook";
import { deliverySecrets } from "./webhookSecrets";
import { webhookChanged } from "./webhookChanged";
import { observeWebhookDelivery } from "../telemetry/metrics";

export const DELIVER_JOB = "webhook.deliver";
export interface DeliverPayload {
  subscriptionId: string;
  eventId: string;
  /** A replay asked for by a person: one attempt, outside the schedule. */
  manual?: boolean;
}

/**
 * A scheduled delivery is one job for all its attempts: the schedule's length, plus a little
 * slack for claims lost to a worker that died mid-attempt (each such claim counts).
 */
export function deliverJobOptions(orgDid: string): EnqueueOptions {
  return { orgDid, maxAttempts: config().webhookRetrySchedule.length + 3 };
}

/**
 * Schedules the delivery of `event` to a webhook, in the transaction that put the event on the
 * bus: the job exists exactly when the event does. The schedule's first entry (0 in the Standard
 * Webhooks one) is the wait before the first attempt.
 */
export async function scheduleDelivery(
  tx: Db,
  event: Pick<Event, "id">,
  subscription: Pick<Subscription, "id" | "orgDid">,
): Promise<void> {
  const first = config().webhookRetrySchedule[0] ?? 0;
  await enqueue(tx, DELIVER_JOB, { subscriptionId: subscription.id, eventId: event.id } satisfies DeliverPayload, {
    ...deliverJobOptions(subscription.orgDid),
    runAt: new Date(Date.now() + first * 1000),
  });
}

/** The id a receiver deduplicates on: the same for every attempt at one event on one webhook. */
export const messageId = (eventId: string, subscriptionId: string) => `msg_${eventId}_${subscriptionId}`;

/** What a delivery sends of its event. */
type DeliveredEvent = Pick<
  Event,
  "id" | "type" | "payload" | "source" | "occurredAt" | "ingestedVia" | "provenanceId" | "provenanceSeq"
>;

/**
 * The event a delivery sends, read as raw SQL (Prisma's model read cost more CPU than the rest of
 * the delivery's reads together): the columns of the body, as Prisma would return them.
 */
async function readEvent(q: RawQueryable, engine: Database["engine"], id: string): Promise<DeliveredEvent | undefined> {
  const [r] = await q.query<Record<string, unknown>>(
    `SELECT "id","type","payload","source","occurred_at","ingested_via","provenance_id","provenance_seq" FROM "event" WHERE "id" = $1`,
    [id],
  );
  if (!r) return undefined;
  return {
    id: r.id as string,
    type: r.type as string,
    payload: rawJson(r.payload, engine) as Event["payload"],
    source: r.source as string,
    occurredAt: rawDate(r.occurred_at)!,
    ingestedVia: r.ingested_via as string,
    provenanceId: (r.provenance_id as string | null) ?? null,
    provenanceSeq:
      r.provenance_seq === null || r.provenance_seq === undefined ? null : BigInt(r.provenance_seq as number),
  };
}

/**
 * The event's record's leaf index and the first checkpoint that covers it, in one read. The bus
 * stores the record's id with the event, and its position where the engine gives it at commit
 * (SQLite); on PostgreSQL the integrator gives it after commit, so it is read from the record
 * (integrated long before, as a rule: the call that put the event answered once it was), waiting
 * for the integrator only if it has not got there.
 */
async function ledgerPlace(
  db: Database,
  e: DeliveredEvent,
): Promise<{ seq: number | null; checkpoint: { tree_size: number; root_hash: string } | null }> {
  type Row = { seq: number | string | null; tree_size: number | string | null; root_hash: string | null };
  let row: Row | undefined;
  if (e.provenanceSeq !== null) {
    const seq = Number(e.provenanceSeq);
    const [c] = await db.raw.query<Row>(
      `SELECT "tree_size", "root_hash" FROM "ledger_checkpoint" WHERE "tree_size" > $1 ORDER BY "tree_size" LIMIT 1`,
      [seq],
    );
    row = { seq, tree_size: c?.tree_size ?? null, root_hash: c?.root_hash ?? null };
  } else if (e.provenanceId) {
    const read = async () =>
      (
        await db.raw.query<Row>(
          `SELECT p."seq",
             (SELECT "tree_size" FROM "ledger_checkpoint" WHERE "tree_size" > p."seq" ORDER BY "tree_size" LIMIT 1) AS "tree_size",
             (SELECT "root_hash" FROM "ledger_checkpoint" WHERE "tree_size" > p."seq" ORDER BY "tree_size" LIMIT 1) AS "root_hash"
           FROM "provenance_record" p WHERE p."id" = $1`,
          [e.provenanceId],
        )
      )[0];
    row = await read();
    if (!row) {
      await awaitIntegrated(db, [e.provenanceId]);
      row = await read();
    }
  }
  if (!row || row.seq === null) return { seq: null, checkpoint: null };
  return {
    seq: Number(row.seq),
    checkpoint:
      row.tree_size === null || row.root_hash === null
        ? null
        : { tree_size: Number(row.tree_size), root_hash: row.root_hash },
  };
}

/**
 * The body: Standard Webhooks' `{type, timestamp, data}` plus the event's place in the ledger, so
 * the receiver can fetch the inclusion proof of the event's provenance record and check, before
 * acting, that svc logged the event (see the README's "Verifying a webhook delivery").
 */
async function deliveryBody(db: Database, e: DeliveredEvent): Promise<string> {
  const place = await ledgerPlace(db, e);
  const recordId = e.provenanceId;
  return JSON.stringify({
    type: e.type,
    timestamp: e.occurredAt.toISOString(),
    data: {
      event_id: e.id,
      payload: e.payload,
      source: e.source,
      occurred_at: e.occurredAt.toISOString(),
      via: e.ingestedVia,
    },
    provenance: {
      record_id: recordId,
      leaf_index: place.seq,
      checkpoint_url: recordId ? `${config().publicUrl}/v1/provenance/${recordId}/proof` : null,
      checkpoint: place.checkpoint,
    },
  });
}

function nextDelay(job: ClaimedJob<DeliverPayload>): number | null {
  if (job.payload.manual) return null;
  const schedule = config().webhookRetrySchedule;
  return job.attempts < schedule.length ? (schedule[job.attempts] ?? 0) * 1000 : null;
}

/**
 * One attempt of `webhook.deliver`: POST the event, signed (Standard Webhooks) with the current
 * secret and, during a rotation, the previous one; redirects are not followed (a 3xx is a
 * failure). 2xx: delivered. 410: the endpoint is disabled. Otherwise the next attempt is
 * scheduled, unless the endpoint has been failing for longer than SVC_WEBHOOK_DISABLE_AFTER_SECONDS
 * (then it is disabled). The attempt's log row, the webhook's health, the job's end or retry and
 * a provenance record of the attempt commit together (grouped with concurrent deliveries').
 */
export async function deliverWebhookJob(job: ClaimedJob<DeliverPayload>): Promise<void> {
  const db = await database();
  const { subscriptionId, eventId } = job.payload;
  // Deleted, disabled or revoked since it was scheduled: nothing is sent, nothing to record.
  const sub = await readSubscription(db.raw, subscriptionId);
  if (!sub || sub.kind !== "webhook" || sub.status !== "active") return;
  const event = await readEvent(db.raw, db.engine, eventId);
  if (!event) return;

  // Read outside the write transaction, which every worker's delivery waits for on SQLite: the
  // creator's delegation and its standing in one read (two when it has ancestors).
  const delegation = sub.createdByDelegationId ? await delegationStanding(db.raw, sub.createdByDelegationId) : null;
  if (delegation?.revoked) {
    // Revoked since the webhook was (re-)enabled: nothing is sent under it; the webhook stops.
    await commitGrouped(db, async (tx) => {
      const current = await tx.subscription.findUnique({ where: { id: sub.id } });
      if (current) await disableWebhook(tx, db.engine, current, "delegation_revoked");
      await finishJob(tx, job);
    });
    return;
  }
  const post = {
    url: sub.targetUrl,
    msgId: messageId(event.id, sub.id),
    body: await deliveryBody(db, event),
    secrets: await deliverySecrets(sub, new Date()),
    userAgent: "svc-webhooks",
    timeoutMs: config().webhookTimeoutMs,
    webhook: true,
  };
  const outcome = await sendSignedPost(post);
  const { statusCode, success, error, timestamp, durationMs } = outcome;
  await commitGrouped(
    db,
    async (tx) => {
      const current = await readSubscription(sqlIn(tx, db.engine), sub.id);
      if (!current) {
        await finishJob(tx, job);
        return;
      }
      const now = new Date();
      const failingSince = success ? null : (current.failingSince ?? now);
      const failedTooLong =
        !success && now.getTime() - failingSince!.getTime() >= config().webhookDisableAfterSeconds * 1000;
      const disableReason =
        success || current.status !== "active" ? null : statusCode === 410 ? "gone" : failedTooLong ? "failing" : null;
      const delay = success || disableReason ? null : nextDelay(job);
      // A job's first claim is the event's first attempt; after that (a retry, a replay, a claim
      // taken over from a dead worker) the log says which attempt this is.
      const attempt =
        job.attempts === 1 && !job.payload.manual
          ? 1
          : (await tx.webhookDelivery.count({ where: { subscriptionId: sub.id, eventId: event.id } })) + 1;
      const deliveryId = newId("whd");
      webhookChanged(tx, sub);
      await insertDeliveryLog(tx, {
        id: deliveryId,
        orgDid: sub.orgDid,
        subscriptionId: sub.id,
        eventId: event.id,
        attempt,
        statusCode,
        success,
        durationMs,
        responseExcerpt: outcome.responseExcerpt,
        error,
        eventType: event.type,
        requestHeaders: JSON.stringify(outcome.requestHeaders),
        requestBody: outcome.requestBody,
        requestBodyTruncated: outcome.requestBodyTruncated,
        responseHeaders: outcome.responseHeaders ? JSON.stringify(outcome.responseHeaders) : null,
        nextAttemptAt: delay !== null ? new Date(now.getTime() + delay) : null,
        createdAt: timestamp,
      });
      if (attempt === 1)
        await sqlIn(tx, db.engine).execute(
          `UPDATE "event_match" SET "delivery_id" = $1 WHERE "event_id" = $2 AND "subscription_id" = $3 AND "delivery_id" IS NULL`,
          [deliveryId, event.id, sub.id],
        );
      if ((current.failingSince?.getTime() ?? null) !== (failingSince?.getTime() ?? null))
        await tx.subscription.update({ where: { id: sub.id }, data: { failingSince } });
      if (disableReason) await disableWebhook(tx, db.engine, current, disableReason);
      // The outbound call is the service acting for whoever created the webhook.
      await appendServiceRecord(
        tx,
        db.engine,
        deliveryRecord("WEBHOOK", post, outcome, {
          org_did: sub.orgDid,
          actingFor: current.createdByDelegationId
            ? { delegationId: current.createdByDelegationId, delegateDid: delegation?.delegateDid }
            : null,
          grantor_did: sub.orgDid,
          resource_type: "webhook",
          resource_id: sub.id,
        }),
      );
      if (delay !== null) await retryJob(tx, job, error ?? `HTTP ${statusCode}`, delay);
      else await finishJob(tx, job);
      afterCommit(tx, () => observeWebhookDelivery(success ? "delivered" : delay !== null ? "retrying" : "failed"));
    },
    { retryable: true },
  );
}

/**
 * The attempt's log row, as raw SQL in the outcome's transaction: about a third of the CPU of
 * Prisma's `webhookDelivery.create`, once per delivery attempt. Stored as Prisma stores it
 * (timestamps as ISO 8601 text and booleans as 0/1 on SQLite).
 */
async function insertDeliveryLog(tx: Db, d: WebhookDelivery): Promise<void> {
  const engine = config().engine;
  const sqlite = engine === "sqlite";
  const at = (t: Date | null) => (t && sqlite ? sqliteTimestamp(t) : t);
  const bool = (b: boolean) => (sqlite ? (b ? 1 : 0) : b);
  await sqlIn(tx, engine).execute(
    `INSERT INTO "webhook_delivery" ("id","org_did","subscription_id","event_id","attempt","status_code","success","duration_ms","response_excerpt","error","next_attempt_at","created_at","event_type","request_headers","request_body","request_body_truncated","response_headers")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)`,
    [
      d.id,
      d.orgDid,
      d.subscriptionId,
      d.eventId,
      d.attempt,
      d.statusCode,
      bool(d.success),
      d.durationMs,
      d.responseExcerpt,
      d.error,
      at(d.nextAttemptAt),
      at(d.createdAt),
      d.eventType,
      d.requestHeaders,
      d.requestBody,
      bool(d.requestBodyTruncated),
      d.responseHeaders,
    ],
  );
}
