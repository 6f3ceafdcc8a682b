import type { z } from "zod";
import { config } from "../config";
import { sqlIn, type Db } from "../db/client";
import { rawDate, rawJson } from "../db/raw";
import { Forbidden, NotFound } from "../errors";
import { coveredBy } from "./capabilities";
import { keyset, olderThan, type ListQuery } from "../http/cursor";
import type { Passport } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import type { PassportListQuery, UpdatePassportRequest } from "./schemas";
import { passportView } from "./views";

export const TIER_ADMIN_CAPABILITY = "svc_api:passports:admin";

/**
 * A passport of the caller's organization; 404 for any other, so other tenants' ids are never
 * revealed. Raw SQL (`sqlIn`): a governed GET of a passport is the read path's yardstick
 * (bench/governed-call.ts), and Prisma's findFirst cost about a third of the whole call's CPU.
 */
export async function getPassport(db: Db, principal: Principal, did: string) {
  const [row] = await sqlIn(db, config().engine).query<PassportSqlRow>(
    `SELECT "did","type","name","description","org_did","verification_tier","identity_tier","public_key_jwk","created_at" FROM "passport" WHERE "did" = $1 AND "org_did" = $2`,
    [did, principal.orgDid],
  );
  if (!row) throw NotFound("passport", did);
  return passportView({
    did: row.did,
    type: row.type,
    name: row.name,
    description: row.description,
    orgDid: row.org_did,
    verificationTier: Number(row.verification_tier),
    identityTier: Number(row.identity_tier),
    publicKeyJwk: rawJson(row.public_key_jwk, config().engine) as Parameters<typeof passportView>[0]["publicKeyJwk"],
    createdAt: rawDate(row.created_at)!,
  });
}

/** A `passport` row as the raw driver reads it, on either engine. */
interface PassportSqlRow {
  did: string;
  type: string;
  name: string;
  description: string | null;
  org_did: string;
  verification_tier: number | bigint;
  identity_tier: number | bigint;
  public_key_jwk: unknown;
  created_at: string | Date;
}

/** The caller's organization's passports, newest first. */
export async function listPassports(
  db: Db,
  principal: Principal,
  query: z.output<typeof ListQuery> & z.output<typeof PassportListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Passport>(secret, "passports", query, (last) => [
    last.createdAt.toISOString(),
    last.did,
  ]);
  const rows = await db.passport.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.type ? { type: query.type } : {}),
      ...olderThan(after, "createdAt", "did"),
    },
    orderBy: [{ createdAt: "desc" }, { did: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(passportView), pagination };
}

/** Sets a passport's tiers (and name, description): an organization administrator's act. */
export async function updatePassport(
  db: Db,
  principal: Principal,
  did: string,
  input: z.output<typeof UpdatePassportRequest>,
) {
  const found = await db.passport.findFirst({ where: { did, orgDid: principal.orgDid }, select: { did: true } });
  if (!found) throw NotFound("passport", did);
  if (input.verification_tier !== undefined || input.identity_tier !== undefined) {
    // Tiers gate the session exchange: only an organization administrator sets them, never on their own passport.
    if (!coveredBy(principal.capabilities, TIER_ADMIN_CAPABILITY))
      throw Forbidden(`Setting tiers needs the capability ${TIER_ADMIN_CAPABILITY}.`, {
        missing_capability: TIER_ADMIN_CAPABILITY,
      });
    if (did === principal.actorDid) throw Forbidden("Nobody sets the tiers of their own passport.");
  }
  const row = await db.passport.update({
    where: { did },
    data: {
      ...(input.verification_tier !== undefined ? { verificationTier: input.verification_tier } : {}),
      ...(input.identity_tier !== undefined ? { identityTier: input.identity_tier } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    },
  });
  return passportView(row);
}

/** How many passports the caller's organization has (the console's overview). */
export function countPassports(db: Db, principal: Principal): Promise<number> {
  return db.passport.count({ where: { orgDid: principal.orgDid } });
}
