import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound } from "../errors";
import { keyset, type ListQuery } from "../http/cursor";
import type { Delegation, Revocation } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import type { DelegationListQuery } from "./schemas";
import { delegationView, revocationView } from "./views";

function statusWhere(status: z.output<typeof DelegationListQuery>["status"]) {
  const now = new Date();
  if (status === "revoked") return { revokedAt: { not: null } };
  if (status === "expired") return { revokedAt: null, expiresAt: { lte: now } };
  if (status === "active") return { revokedAt: null, expiresAt: { gt: now } };
  return {};
}

/** The caller's organization's delegations (API keys, tokens, sessions), newest first. Ids sort by time. */
export async function listDelegations(
  db: Db,
  principal: Principal,
  query: z.output<typeof ListQuery> & z.output<typeof DelegationListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Delegation>(secret, "delegations", query, (last) => [last.id]);
  const rows = await db.delegation.findMany({
    where: {
      orgDid: principal.orgDid,
      ...statusWhere(query.status),
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.delegate_did ? { delegateDid: query.delegate_did } : {}),
      ...(query.parent_id ? { parentId: query.parent_id } : {}),
      ...(after ? { id: { lt: after[0] as string } } : {}),
    },
    orderBy: { id: "desc" },
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(delegationView), pagination };
}

/** One delegation with its ancestry and the delegations derived from it. */
export async function getDelegation(db: Db, principal: Principal, id: string) {
  const row = await db.delegation.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!row) throw NotFound("delegation", id);
  const derived = await db.delegation.findMany({
    where: { parentId: id, orgDid: principal.orgDid },
    orderBy: { id: "desc" },
    take: 100,
  });
  return {
    ...delegationView(row),
    ancestry: row.ancestry ? row.ancestry.split(" ") : [],
    derived: derived.map(delegationView),
  };
}

/** Revocation records of the caller's organization, newest first. */
export async function listRevocations(db: Db, principal: Principal, query: z.output<typeof ListQuery>, secret: Buffer) {
  const { after, take, page } = keyset<Revocation>(secret, "revocations", query, (last) => [last.id]);
  const rows = await db.revocation.findMany({
    where: { orgDid: principal.orgDid, ...(after ? { id: { lt: after[0] as string } } : {}) },
    orderBy: { id: "desc" },
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(revocationView), pagination };
}
