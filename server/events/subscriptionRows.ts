import type { Prisma, Subscription } from "../db/generated/sqlite/client";
import { config } from "../config";
import { rawDate, rawJson, type RawQueryable } from "../db/raw";

/**
 * Subscriptions read as raw SQL on the hot paths (ingest's dispatch, every webhook delivery),
 * where Prisma's model read was the largest single cost: every column, mapped as Prisma would
 * return it, so dispatchers and the delivery get the whole row.
 */
export const SUBSCRIPTION_COLUMNS = `"id","org_did","kind","event_types","target_url","agent_id","description","status","created_by_delegation_id","secret_sealed",
  "previous_secret_sealed","previous_expires_at","failing_since","disabled_reason","created_at","updated_at","rebound_from_delegation_id"`;

/** A row of `SUBSCRIPTION_COLUMNS`, from either engine's driver, as Prisma's `Subscription`. */
export function subscriptionFromRow(r: Record<string, unknown>): Subscription {
  return {
    id: r.id as string,
    orgDid: r.org_did as string,
    kind: r.kind as string,
    eventTypes: rawJson(r.event_types, config().engine) as Prisma.JsonValue,
    targetUrl: r.target_url as string,
    agentId: (r.agent_id as string | null) ?? null,
    description: r.description as string,
    status: r.status as string,
    createdByDelegationId: (r.created_by_delegation_id as string | null) ?? null,
    secretSealed: (r.secret_sealed as string | null) ?? null,
    previousSecretSealed: (r.previous_secret_sealed as string | null) ?? null,
    previousExpiresAt: rawDate(r.previous_expires_at),
    failingSince: rawDate(r.failing_since),
    disabledReason: (r.disabled_reason as string | null) ?? null,
    createdAt: rawDate(r.created_at)!,
    updatedAt: rawDate(r.updated_at)!,
    reboundFromDelegationId: (r.rebound_from_delegation_id as string | null) ?? null,
  };
}

/** One subscription by id, whatever its organization, kind or status (the caller checks those). */
export async function readSubscription(q: RawQueryable, id: string): Promise<Subscription | undefined> {
  const [row] = await q.query<Record<string, unknown>>(
    `SELECT ${SUBSCRIPTION_COLUMNS} FROM "subscription" WHERE "id" = $1`,
    [id],
  );
  return row ? subscriptionFromRow(row) : undefined;
}
