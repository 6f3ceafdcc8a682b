import type { Principal } from "../governance/principal";
import { type Database, type Db, sqlIn } from "../db/client";
import { Unauthenticated } from "../errors";
import { tokenHash, verifyDelegationToken } from "../keys/tokens";
import { processWide } from "../processWide";

/** A `delegation` row read as raw SQL, on either engine. */
export interface DelegationRow {
  id: string;
  org_did: string;
  kind: string;
  grantor_did: string;
  delegate_did: string;
  ancestry: string | null;
  capabilities: string | string[];
  environment: string | null;
  risk_level: string;
  expires_at: string | Date;
}

// Verified tokens, keyed by the token's hash, until they expire: a repeat call skips the
// signature check and the delegation lookup. Revocation is still checked on every call.
const verified = processWide("identity.verifiedTokens", () => new Map<string, Principal>());
const MAX_CACHED = 20_000;

/** Authenticates an `Authorization` header value: a valid, unexpired, unrevoked delegation token. */
export async function authenticate(db: Database, authorization: string | null): Promise<Principal> {
  if (!authorization) throw Unauthenticated("The request has no Authorization header.", "no_credentials");
  const match = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization);
  if (!match) throw Unauthenticated("The Authorization header must be `Bearer <token>`.", "no_credentials");
  const token = match[1]!;
  const key = tokenHash(token);
  let principal = verified.get(key);
  if (principal && principal.expiresAt.getTime() <= Date.now()) {
    verified.delete(key);
    principal = undefined;
  }
  if (!principal) {
    principal = await principalFromToken(db, token);
    if (verified.size >= MAX_CACHED) verified.delete(verified.keys().next().value!);
    verified.set(key, principal);
  }
  await assertNotRevoked(db, principal.chain);
  return principal;
}

async function principalFromToken(db: Database, token: string): Promise<Principal> {
  const claims = await verifyDelegationToken(token);
  const principal = await principalFromDelegation(db, claims.jti);
  if (principal.orgDid !== claims.org || principal.actorDid !== claims.sub)
    throw Unauthenticated("The token's delegation does not exist.");
  return { ...principal, expiresAt: new Date(Math.min(principal.expiresAt.getTime(), claims.exp * 1000)) };
}

/**
 * Authenticates a signed-in person's console session by its delegation id (the session cookie,
 * encrypted by next-auth, carries it): the same expiry and revocation checks as a bearer token.
 */
export async function authenticateSession(db: Database, delegationId: string): Promise<Principal> {
  const principal = await principalFromDelegation(db, delegationId);
  if (principal.kind !== "session") throw Unauthenticated("Not a console session.");
  await assertNotRevoked(db, principal.chain);
  const [member] = await db.raw.query<{ role: string; status: string }>(
    `SELECT "role","status" FROM "member" WHERE "passport_did" = $1`,
    [principal.actorDid],
  );
  if (!member || member.status !== "active") throw Unauthenticated("This person's access has been revoked.");
  return { ...principal, role: member.role };
}

async function principalFromDelegation(db: Database, id: string): Promise<Principal> {
  const [row] = await db.raw.query<DelegationRow>(
    `SELECT "id","org_did","kind","grantor_did","delegate_did","ancestry","capabilities","environment","risk_level","expires_at" FROM "delegation" WHERE "id" = $1`,
    [id],
  );
  if (!row) throw Unauthenticated("The token's delegation does not exist.");
  const principal = principalOfDelegationRow(row);
  if (principal.expiresAt.getTime() <= Date.now()) throw Unauthenticated("The token's delegation has expired.");
  return principal;
}

/** `principalOfDelegation` of a raw row (SQLite keeps capabilities as JSON text and timestamps as text). */
export function principalOfDelegationRow(row: DelegationRow): Principal {
  return principalOfDelegation({
    id: row.id,
    orgDid: row.org_did,
    delegateDid: row.delegate_did,
    grantorDid: row.grantor_did,
    capabilities: typeof row.capabilities === "string" ? (JSON.parse(row.capabilities) as string[]) : row.capabilities,
    environment: row.environment ?? null,
    riskLevel: row.risk_level,
    kind: row.kind,
    expiresAt: row.expires_at instanceof Date ? row.expires_at : new Date(row.expires_at),
    ancestry: row.ancestry ?? null,
  });
}

/**
 * The principal of a delegation the caller's chain holds (a console session's standing grant), to
 * derive from it: the same fields as a token's, read in the caller's transaction.
 */
export async function delegationPrincipal(tx: Db, id: string): Promise<Principal> {
  const row = await tx.delegation.findUnique({ where: { id } });
  if (!row || row.revokedAt) throw Unauthenticated("The delegation this session derives from has been revoked.");
  if (row.expiresAt.getTime() <= Date.now())
    throw Unauthenticated("The delegation this session derives from has expired.");
  return principalOfDelegation({ ...row, capabilities: row.capabilities as string[] });
}

/** The principal a live delegation row stands for (its chain: its ancestry, then itself). */
export function principalOfDelegation(row: {
  id: string;
  orgDid: string;
  delegateDid: string;
  grantorDid: string;
  capabilities: string[];
  environment: string | null;
  riskLevel: string;
  kind: string;
  expiresAt: Date;
  ancestry: string | null;
}): Principal {
  return {
    delegationId: row.id,
    orgDid: row.orgDid,
    actorDid: row.delegateDid,
    grantorDid: row.grantorDid,
    capabilities: row.capabilities,
    environment: row.environment,
    riskLevel: row.riskLevel,
    kind: row.kind,
    expiresAt: row.expiresAt,
    chain: [...(row.ancestry ? row.ancestry.split(" ") : []), row.id],
  };
}

/**
 * The revocation check again, inside a write transaction: on PostgreSQL the chain's rows are
 * share-locked, so a revocation waits for this write to commit (or this write sees it).
 */
export async function assertChainLive(tx: Db, engine: Database["engine"], chain: string[]): Promise<void> {
  if (chain.length === 0) return;
  const placeholders = chain.map((_, i) => `$${i + 1}`).join(",");
  const rows = await sqlIn(tx, engine).query<{ id: string; revoked_at: unknown }>(
    `SELECT "id","revoked_at" FROM "delegation" WHERE "id" IN (${placeholders})${engine === "postgresql" ? " FOR SHARE" : ""}`,
    chain,
  );
  if (rows.some((r) => r.revoked_at !== null)) throw Unauthenticated("The token's delegation has been revoked.");
}

async function assertNotRevoked(db: Database, chain: string[]): Promise<void> {
  const placeholders = chain.map((_, i) => `$${i + 1}`).join(",");
  const revoked = await db.raw.query<{ id: string }>(
    `SELECT "id" FROM "delegation" WHERE "id" IN (${placeholders}) AND "revoked_at" IS NOT NULL LIMIT 1`,
    chain,
  );
  if (revoked.length > 0) {
    throw Unauthenticated(
      revoked[0]!.id === chain[chain.length - 1]
        ? "The token's delegation has been revoked."
        : `The token's delegation was derived from delegation ${revoked[0]!.id}, which has been revoked.`,
    );
  }
}
