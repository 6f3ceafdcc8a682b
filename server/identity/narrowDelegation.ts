import type { Db } from "../db/client";
import { config } from "../config";
import { NotFound, ValidationFailed } from "../errors";
import { newId } from "../ids";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { covers, coveredBy, missingCapabilities } from "./capabilities";

/** Who narrows or restores, and on which learning proposal's account. */
export interface NarrowingBy {
  actorDid: string;
  proposalId: string | null;
}

/**
 * What `held` keeps under a narrower `grant`: each held capability the grant covers, and where a
 * held wildcard is wider than the grant, the grant's own capabilities under it. A delegation that
 * derives from a narrowed one keeps exactly this, as a revoked one's derived delegations lose all.
 */
export function intersectCapabilities(held: readonly string[], grant: readonly string[]): string[] {
  const kept = new Set<string>();
  for (const h of held) {
    if (coveredBy(grant, h)) kept.add(h);
    else for (const g of grant) if (covers(h, g)) kept.add(g);
  }
  return [...kept];
}

const same = (a: readonly string[], b: readonly string[]) => JSON.stringify(a) === JSON.stringify(b);

/** The delegations derived from `id` (at any depth), parents before their children. */
async function descendantsOf(db: Db, orgDid: string, id: string) {
  const rows = await db.delegation.findMany({
    where: { orgDid, ancestry: { contains: id } },
    select: { id: true, parentId: true, ancestry: true, capabilities: true },
  });
  return rows
    .map((r) => ({ ...r, path: r.ancestry.split(" ") }))
    .filter((r) => r.path.includes(id))
    .sort((a, b) => a.path.length - b.path.length);
}

/**
 * Narrows a delegation in place to `capabilities` (every one covered by what it holds: it can only
 * narrow, else 400), and every delegation derived from it to what its narrowed parent still holds.
 * The gate reads a token's capabilities from its delegation on each call, so a call needing a
 * removed capability is refused (403, recorded) from the moment this commits. Each change is kept
 * (delegation_narrowing) so that `restoreNarrowing` can put every delegation back exactly, and a
 * provenance record of the organization names the narrowing.
 */
export async function narrowDelegation(db: Db, orgDid: string, id: string, capabilities: string[], by: NarrowingBy) {
  const target = await db.delegation.findFirst({ where: { id, orgDid }, select: { capabilities: true } });
  if (!target) throw NotFound("delegation", id);
  const held = target.capabilities as string[];
  const wider = missingCapabilities(held, capabilities);
  if (wider.length > 0)
    throw ValidationFailed([
      {
        field: "/capabilities",
        code: "NOT_A_NARROWING",
        message: `A delegation can only narrow: it does not hold ${wider.join(", ")}.`,
      },
    ]);
  const next = new Map<string, string[]>([[id, capabilities]]);
  const changes = [{ delegationId: id, from: held, to: capabilities }];
  for (const d of await descendantsOf(db, orgDid, id)) {
    const parent = next.get(d.parentId ?? "");
    const own = d.capabilities as string[];
    if (!parent) continue; // its parent kept what it held: so does it
    const kept = intersectCapabilities(own, parent);
    next.set(d.id, kept);
    if (!same(kept, own)) changes.push({ delegationId: d.id, from: own, to: kept });
  }
  await record(db, orgDid, id, "narrow", changes, by);
}

/**
 * Undoes a narrowing: every delegation `by.proposalId`'s narrowing changed gets back exactly what
 * it held before (the target's is `capabilities`, the proposal's `previous`), recorded like it.
 */
export async function restoreNarrowing(db: Db, orgDid: string, id: string, capabilities: string[], by: NarrowingBy) {
  const target = await db.delegation.findFirst({ where: { id, orgDid }, select: { capabilities: true } });
  if (!target) throw NotFound("delegation", id);
  const narrowed = by.proposalId
    ? await db.delegationNarrowing.findMany({
        where: { orgDid, targetId: id, proposalId: by.proposalId, action: "narrow" },
        orderBy: { createdAt: "asc" },
      })
    : [];
  const changes = [{ delegationId: id, from: target.capabilities as string[], to: capabilities }];
  for (const n of narrowed) {
    if (n.delegationId === id) continue;
    const now = await db.delegation.findUnique({ where: { id: n.delegationId }, select: { capabilities: true } });
    if (now)
      changes.push({
        delegationId: n.delegationId,
        from: now.capabilities as string[],
        to: n.fromCapabilities as string[],
      });
  }
  await record(db, orgDid, id, "restore", changes, by);
}

async function record(
  db: Db,
  orgDid: string,
  targetId: string,
  action: "narrow" | "restore",
  changes: { delegationId: string; from: string[]; to: string[] }[],
  by: NarrowingBy,
) {
  for (const c of changes) await db.delegation.update({ where: { id: c.delegationId }, data: { capabilities: c.to } });
  await db.delegationNarrowing.createMany({
    data: changes.map((c) => ({
      id: newId("dnr"),
      orgDid,
      delegationId: c.delegationId,
      targetId,
      proposalId: by.proposalId,
      action,
      fromCapabilities: c.from,
      toCapabilities: c.to,
      actorDid: by.actorDid,
    })),
  });
  // The service acts for the organization (the proposal's decider is recorded by the apply call itself).
  await appendServiceRecord(db, config().engine, {
    org_did: orgDid,
    grantor_did: null,
    capability: null,
    operation: action === "narrow" ? "DELEGATION_NARROW" : "DELEGATION_RESTORE",
    resource_type: "delegation",
    resource_id: targetId,
    decision: "allowed",
    status: 200,
    request_hash: requestHash({
      delegation_id: targetId,
      proposal_id: by.proposalId,
      changes: changes.map((c) => ({ delegation_id: c.delegationId, capabilities: c.to })),
    }),
  });
}
