import type { Database } from "../db/client";
import { rootOrgDidOf } from "../setup/rootOrg";
import { ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import type { ProvenanceRecord } from "../provenance/record";
import { latestCheckpoint } from "./proofs";

/**
 * Streams records [from, to) as NDJSON, one published record per line, in leaf order. Records of
 * other organizations are redacted to `{seq, leaf_hash, redacted: true}`: an auditor can still
 * rebuild every root from the leaf hashes while each tenant's records stay private. The root
 * organization (the operator) exports everything.
 */
const PAGE = 1000;

/** A record as the driver returns it: seq may be a string (BIGINT), timestamp a string or a Date. */
type RawRecord = Omit<ProvenanceRecord, "seq" | "timestamp" | "trace_id"> & {
  seq: number | string;
  timestamp: string | Date;
  trace_id: string | null;
};

/** A record as GET returns it: `trace_id` only when the call was traced (its leaf bytes hold it only then). */
function published({ trace_id, ...r }: RawRecord): ProvenanceRecord {
  return {
    ...r,
    seq: Number(r.seq),
    status: Number(r.status),
    timestamp: new Date(r.timestamp).toISOString(),
    ...(trace_id ? { trace_id } : {}),
  };
}

export async function exportRecords(
  db: Database,
  principal: Principal,
  from: number,
  to: number | undefined,
): Promise<Response> {
  const [{ count }] = (await db.raw.query<{ count: number | string }>(
    `SELECT COALESCE(MAX("seq") + 1, 0) AS "count" FROM "provenance_record"`,
  )) as [{ count: number | string }];
  const end = to ?? (await latestCheckpoint(db))?.treeSize ?? Number(count);
  if (end > Number(count))
    throw ValidationFailed([
      { field: "to", code: "OUT_OF_RANGE", message: `to must be at most ${count}, the number of records.` },
    ]);
  if (from >= end)
    throw ValidationFailed([{ field: "from", code: "OUT_OF_RANGE", message: `from must be less than to (${end}).` }]);
  const rootDid = await rootOrgDidOf(db);
  const seesAll = rootDid === principal.orgDid;
  let next = from;
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next >= end) {
        controller.close();
        return;
      }
      const upto = Math.min(end, next + PAGE);
      const rows = await db.raw.query<RawRecord>(
        `SELECT "id","seq","timestamp","org_did","actor_did","delegation_id","grantor_did","capability","operation","resource_type","resource_id","decision","status","request_hash","request_id","leaf_hash","trace_id" FROM "provenance_record" WHERE "seq" >= $1 AND "seq" < $2 ORDER BY "seq"`,
        [next, upto],
      );
      const lines = rows.map((r) =>
        JSON.stringify(
          seesAll || r.org_did === principal.orgDid
            ? published(r)
            : { seq: Number(r.seq), leaf_hash: r.leaf_hash, redacted: true },
        ),
      );
      controller.enqueue(encoder.encode(lines.join("\n") + "\n"));
      next = upto;
    },
  });
  return new Response(stream, {
    headers: {
      "Content-Type": "application/x-ndjson",
      "Content-Disposition": `attachment; filename="provenance-${from}-${end}.ndjson"`,
    },
  });
}
