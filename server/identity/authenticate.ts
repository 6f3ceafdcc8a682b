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
// signature check and the delegation lookup. Revocation is still checked on every call, and so is
// the grant: a delegation narrowed in place (narrowDelegation.ts) is read again, in every process.
interface Verified {
  principal: Principal;
  /** The delegation's capabilities as stored when read (JSON text), compared on each call. */
  grant: string;
}
const verified = processWide("identity.verifiedGrants", () => new Map<string, Verified>());
const MAX_CACHED = 20_000;

/** Authenticates an `Authorization` header value: a valid, unexpired, unrevoked delegation token. */
export async function authenticate(db: Database, authorization: string | null): Promise<Principal> {
  if (!authorization) throw Unauthenticated("The request has no Authorization header.", "no_credentials");
  const match = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization);
  if (!match) throw Unauthenticated("The Authorization header must be `Bearer <token>`.", "no_credentials");
  const token = match[1]!;
  const key = tokenHash(token);
  let entry = verified.get(key);
  if (entry && entry.principal.expiresAt.getTime() <= Date.now()) {
    verified.delete(key);
    entry = undefined;
  }
  if (entry && (await assertNotRevoked(db, entry.principal.chain, entry.grant)) === "narrowed") {
    verified.delete(key);
    entry = undefined;
  }
  if (!entry) {
    entry = await principalFromToken(db, token);
    if (verified.size >= MAX_CACHED) verified.delete(verified.keys().next().value!);
    verified.set(key, entry);
    await assertNotRevoked(db, entry.principal.chain);
  }
  return entry.principal;
}

async function principalFromToken(db: Database, token: string): Promise<Verified> {
  const claims = await verifyDelegationToken(token);
  const { principal, grant } = await readDelegation(db, claims.jti);
  if (principal.orgDid !== claims.org || principal.actorDid !== claims.sub)
    throw Unauthenticated("The token's delegation does not exist.");
  return {
    principal: { ...principal, expiresAt: new Date(Math.min(principal.expiresAt.getTime(), claims.exp * 1000)) },
    grant,
  };
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
  return (await readDelegation(db, id)).principal;
}

async function readDelegation(db: Database, id: string): Promise<Verified> {
  const [row] = await db.raw.query<DelegationRow>(
    `SELECT "id","org_did","kind","grantor_did","delegate_did","ancestry","capabilities","environment","risk_level","expires_at" FROM "delegation" WHERE "id" = $1`,
    [id],
  );
  if (!row) throw Unauthenticated("The token's delegation does not exist.");
  const principal = principalOfDelegationRow(row);
  if (principal.expiresAt.getTime() <= Date.now()) throw Unauthenticated("The token's delegation has expired.");
  // SQLite keeps the JSON text (compared as text); PostgreSQL's jsonb is compared as jsonb.
  const grant = typeof row.capabilities === "string" ? row.capabilities : JSON.stringify(row.capabilities);
  return { principal, grant };
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

/**
 * Throws when the chain holds a revoked delegation. With `grant` (the capabilities read when the
 * token was verified), also says "narrowed" when the token's own delegation holds other
 * capabilities now: one query either way, at most one row.
 */
async function assertNotRevoked(db: Database, chain: string[], grant?: string): Promise<"narrowed" | undefined> {
  const placeholders = chain.map((_, i) => `$${i + 1}`).join(",");
  const changed =
    grant === undefined
      ? ""
      : ` OR ("id" = $${chain.length} AND "capabilities" <> $${chain.length + 1}${db.engine === "postgresql" ? "::jsonb" : ""})`;
  const rows = await db.raw.query<{ id: string; revoked: unknown }>(
    `SELECT "id", "revoked_at" IS NOT NULL AS "revoked" FROM "delegation" WHERE "id" IN (${placeholders}) AND ("revoked_at" IS NOT NULL${changed}) ORDER BY "revoked" DESC LIMIT 1`,
    grant === undefined ? chain : [...chain, grant],
  );
  const revoked = rows.filter((r) => r.revoked === true || r.revoked === 1 || r.revoked === 1n);
  if (rows.length > 0 && revoked.length === 0) return "narrowed";
  if (revoked.length > 0) {
    throw Unauthenticated(
      revoked[0]!.id === chain[chain.length - 1]
        ? "The token's delegation has been revoked."
        : `The token's delegation was derived from delegation ${revoked[0]!.id}, which has been revoked.`,
    );
  }
}
