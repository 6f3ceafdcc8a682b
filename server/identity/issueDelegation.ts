import { config } from "../config";
import { type Db, sqlIn } from "../db/client";
import type { Delegation } from "../db/generated/sqlite/client";
import { sqliteTimestamp } from "../db/raw";
import { DomainError, domainError, Forbidden, ValidationFailed } from "../errors";
import { newId } from "../ids";
import { signDelegationToken } from "../keys/tokens";
import type { Principal } from "../governance/principal";
import { coveredBy, missingCapabilities } from "./capabilities";
import { runIssuanceHooks, type DelegationRequest } from "./issuanceHooks";

const MAX_CHAIN_DEPTH = 16;

/**
 * Derives a delegation from the caller's own and returns its token, once (it is never stored).
 * See `deriveDelegation` for the rules.
 */
export async function issueDelegation(db: Db, grantor: Principal, req: DelegationRequest) {
  const { row, delegate, budget } = await deriveDelegation(db, grantor, req);
  const token = await signDelegationToken({
    delegationId: row.id,
    subject: req.delegateDid,
    orgDid: grantor.orgDid,
    capabilities: req.capabilities,
    expiresAt: row.expiresAt,
    environment: row.environment,
  });
  return { row, token, delegate, budget };
}

/**
 * Derives a delegation from the caller's own, without a token: a run's delegation is only ever
 * looked up by id, and signing one inside the write lock would hold the lock across an event-loop
 * turn. It can only narrow: every capability must be covered by the caller's, it cannot outlive
 * the caller's delegation, and an environment constraint is inherited.
 */
export async function deriveDelegation(db: Db, grantor: Principal, req: DelegationRequest) {
  const missing = missingCapabilities(grantor.capabilities, req.capabilities);
  if (missing.length > 0) {
    throw Forbidden(
      `A delegation can only narrow its grantor's capabilities; yours do not cover ${missing.join(", ")}.`,
      { missing_capabilities: missing },
    );
  }
  const now = Date.now();
  const left = Math.floor((grantor.expiresAt.getTime() - now) / 1000);
  let seconds: number;
  if (req.durationSeconds !== undefined) {
    if (req.durationSeconds > left) {
      throw Forbidden(
        `A delegation cannot outlive its grantor's: yours expires in ${left} seconds, ${req.durationSeconds} were requested.`,
        { max_duration_seconds: left },
      );
    }
    seconds = req.durationSeconds;
  } else {
    seconds = Math.min(req.defaultSeconds ?? 86_400, left);
  }
  if (seconds < 1) throw Forbidden("Your delegation has no lifetime left to delegate.");
  if (grantor.environment && req.environment && req.environment !== grantor.environment) {
    throw Forbidden(
      `Your delegation is limited to the environment ${JSON.stringify(grantor.environment)}; it cannot grant ${JSON.stringify(req.environment)}.`,
    );
  }
  if (grantor.chain.length >= MAX_CHAIN_DEPTH)
    throw Forbidden(`Delegation chains are limited to ${MAX_CHAIN_DEPTH} links.`);

  const isOrg = req.delegateDid === grantor.orgDid;
  const delegate = isOrg
    ? null
    : await db.passport.findFirst({ where: { did: req.delegateDid, orgDid: grantor.orgDid } });
  if (!isOrg && !delegate) {
    throw ValidationFailed([
      { field: "delegate_did", code: "UNKNOWN_PASSPORT", message: "No passport with this DID in your organization." },
    ]);
  }
  if (delegate && req.kind !== "session" && !coveredBy(grantor.capabilities, "svc_api:passports:admin")) {
    // Otherwise a low-tier grantor could borrow a higher-tier passport's standing through a token it keeps.
    const own = await db.passport.findFirst({ where: { did: grantor.actorDid, orgDid: grantor.orgDid } });
    if (delegate.verificationTier > (own?.verificationTier ?? 0) || delegate.identityTier > (own?.identityTier ?? 0)) {
      throw Forbidden(
        "A delegation cannot go to a passport with higher tiers than its grantor's, unless the grantor holds svc_api:passports:admin.",
      );
    }
  }
  const id = newId("dlg");
  const createdAt = new Date(now);
  const expiresAt = new Date(now + seconds * 1000);
  const environment = req.environment ?? grantor.environment ?? null;
  // Only API keys minted by the operator (the CLI, no delegation) start a chain; every other
  // credential derives from the caller's delegation: bounded by its lifetime, revoked with it.
  const rootGrant = grantor.delegationId === "";
  const row: Delegation = {
    id,
    orgDid: grantor.orgDid,
    kind: req.kind,
    name: req.name ?? null,
    grantorDid: grantor.actorDid,
    delegateDid: req.delegateDid,
    parentId: rootGrant ? null : grantor.delegationId,
    ancestry: rootGrant ? "" : grantor.chain.join(" "),
    capabilities: req.capabilities,
    environment,
    riskLevel: req.riskLevel ?? "standard",
    createdAt,
    expiresAt,
    revokedAt: null,
    passkeyAssertedAt: null,
    mintedByDid: req.mintedByDid ?? null,
  };
  await insertDelegation(db, row);
  // What other areas attach to a new delegation (its budget), in the same transaction.
  await runIssuanceHooks(db, grantor, row, req);
  return { row, delegate, budget: req.budget };
}

/** The SessionExchangeResponse shape of a new delegation. */
export function sessionResponse(issued: Awaited<ReturnType<typeof issueDelegation>>) {
  const { row, token, delegate } = issued;
  return {
    delegation_id: row.id,
    token,
    passport_id: row.delegateDid,
    did: row.delegateDid,
    capabilities: row.capabilities as string[],
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    verification_tier: delegate?.verificationTier ?? 0,
    identity_tier: delegate?.identityTier ?? 0,
    ...(issued.budget ? { budget: issued.budget } : {}),
  };
}

export const tierTooLow = (tier: "verification" | "identity", actual: number, required: number) =>
  domainError("tier_too_low", `The passport's ${tier} tier is ${actual}, below the required ${required}.`, {
    tier,
    actual_tier: actual,
    required_tier: required,
    remediation: [
      {
        step: 1,
        description: `Ask an organization administrator to raise the passport's ${tier} tier (PATCH /v1/passports/{did}).`,
      },
    ],
  });

/**
 * Inserts a new delegation as raw SQL through the caller's transaction: every invoke and trigger
 * run derives one, and Prisma's `delegation.create` costs about three times the CPU of the same
 * INSERT sent as raw SQL (`sqlIn`). Values are stored as Prisma stores them (timestamps as
 * ISO 8601 text on SQLite, capabilities as JSON).
 */
async function insertDelegation(db: Db, d: Delegation): Promise<void> {
  const engine = config().engine;
  const at = (t: Date) => (engine === "sqlite" ? sqliteTimestamp(t) : t);
  await sqlIn(db, engine).execute(
    `INSERT INTO "delegation" ("id","org_did","kind","name","grantor_did","delegate_did","parent_id","ancestry","capabilities","environment","risk_level","created_at","expires_at","minted_by_did")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,${engine === "postgresql" ? "$9::jsonb" : "$9"},$10,$11,$12,$13,$14)`,
    [
      d.id,
      d.orgDid,
      d.kind,
      d.name,
      d.grantorDid,
      d.delegateDid,
      d.parentId,
      d.ancestry,
      JSON.stringify(d.capabilities),
      d.environment,
      d.riskLevel,
      at(d.createdAt),
      at(d.expiresAt),
      d.mintedByDid,
    ],
  );
}
