import type { z } from "zod";
import type { Db } from "../db/client";
import type { ProvenanceRecord as Row } from "../db/generated/sqlite/client";
import { NotFound } from "../errors";
import { keyset, type ListQuery } from "../http/cursor";
import type { Principal } from "../governance/principal";
import type { ProvenanceRecord } from "./record";
import type { ProvenanceListQuery } from "./schemas";

/** A stored record in its published form: the exact object its leaf hash covers (plus leaf_hash). */
export function recordView(r: Row): ProvenanceRecord {
  return {
    id: r.id,
    seq: Number(r.seq),
    timestamp: r.timestamp.toISOString(),
    org_did: r.orgDid,
    actor_did: r.actorDid,
    delegation_id: r.delegationId,
    grantor_did: r.grantorDid,
    capability: r.capability,
    operation: r.operation,
    resource_type: r.resourceType,
    resource_id: r.resourceId,
    decision: r.decision as "allowed" | "denied",
    status: r.status,
    request_hash: r.requestHash,
    request_id: r.requestId,
    ...(r.traceId ? { trace_id: r.traceId } : {}),
    leaf_hash: r.leafHash,
  };
}

/**
 * The console's own page-view reads: allowed tRPC calls needing a read capability or none (every
 * write procedure needs a `:write` capability). Hidden on request, never deleted: they are a
 * third of a short session's records and bury what the explorer is opened for.
 */
const CONSOLE_READ = {
  operation: { startsWith: "TRPC " },
  decision: "allowed",
  OR: [{ capability: null }, { capability: { endsWith: ":read" } }],
};

/** The caller's organization's records, newest first, filtered. */
export async function listProvenance(
  db: Db,
  principal: Principal,
  query: z.output<typeof ListQuery> & z.output<typeof ProvenanceListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Row>(secret, "provenance", query, (last) => [Number(last.seq)]);
  const before = after ? Number(after[0]) : undefined;
  const rows = await db.provenanceRecord.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.actor ? { actorDid: query.actor } : {}),
      ...(query.delegation ? { delegationId: query.delegation } : {}),
      ...(query.grantor ? { grantorDid: query.grantor } : {}),
      ...(query.resource ? { resourceId: query.resource } : {}),
      ...(query.resource_type ? { resourceType: query.resource_type } : {}),
      ...(query.decision ? { decision: query.decision } : {}),
      ...(query.operation ? { operation: { startsWith: query.operation } } : {}),
      ...(query.console_reads === "exclude" ? { NOT: CONSOLE_READ } : {}),
      ...(query.from || query.to
        ? {
            timestamp: {
              ...(query.from ? { gte: new Date(query.from) } : {}),
              ...(query.to ? { lt: new Date(query.to) } : {}),
            },
          }
        : {}),
      ...(before !== undefined ? { seq: { lt: BigInt(before) } } : {}),
    },
    orderBy: { seq: "desc" },
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(recordView), pagination };
}

/** One record of the caller's organization. */
export async function getProvenanceRecord(db: Db, principal: Principal, id: string): Promise<ProvenanceRecord> {
  const row = await db.provenanceRecord.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!row) throw NotFound("provenance record", id);
  return recordView(row);
}
