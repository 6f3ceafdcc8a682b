import type { Database } from "../db/client";
import { NoCheckpointYet, NotFound, NotYetCheckpointed, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { consistencyRanges, inclusionRanges, nodeKey, nodesFor, rangeHash, type NodeKey } from "./merkle";

/**
 * Inclusion and consistency proofs against the ledger's signed checkpoints, computed from the
 * stored perfect subtrees with one query for all the nodes a proof needs.
 */
export interface Checkpoint {
  treeSize: number;
  rootHash: string;
  note: string;
  createdAt: Date;
}

export async function latestCheckpoint(db: Database): Promise<Checkpoint | undefined> {
  const [row] = await db.raw.query<{
    tree_size: number | string;
    root_hash: string;
    note: string;
    created_at: string | Date;
  }>(`SELECT "tree_size","root_hash","note","created_at" FROM "ledger_checkpoint" ORDER BY "tree_size" DESC LIMIT 1`);
  return (
    row && {
      treeSize: Number(row.tree_size),
      rootHash: row.root_hash,
      note: row.note,
      createdAt: new Date(row.created_at),
    }
  );
}

export async function checkpointOfSize(db: Database, size: number): Promise<Checkpoint | undefined> {
  const [row] = await db.raw.query<{
    tree_size: number | string;
    root_hash: string;
    note: string;
    created_at: string | Date;
  }>(`SELECT "tree_size","root_hash","note","created_at" FROM "ledger_checkpoint" WHERE "tree_size" = $1`, [size]);
  return (
    row && {
      treeSize: Number(row.tree_size),
      rootHash: row.root_hash,
      note: row.note,
      createdAt: new Date(row.created_at),
    }
  );
}

/** How far the newest checkpoint is behind the newest record: the figures behind ledger_sync_status. */
export async function ledgerSync(db: Database) {
  const [row] = await db.raw.query<{ n: number | string }>(
    `SELECT COALESCE(MAX("seq") + 1, 0) AS "n" FROM "provenance_record"`,
  );
  const recordCount = Number(row?.n ?? 0);
  const checkpoint = await latestCheckpoint(db);
  const treeSize = checkpoint?.treeSize ?? 0;
  return {
    status: recordCount - treeSize <= 0 ? ("in_sync" as const) : ("behind" as const),
    record_count: recordCount,
    checkpoint_tree_size: treeSize,
    records_behind: Math.max(0, recordCount - treeSize),
    checkpoint_age_seconds: checkpoint ? Math.max(0, (Date.now() - checkpoint.createdAt.getTime()) / 1000) : null,
  };
}

async function fetchNodes(db: Database, ranges: [number, number][]): Promise<(level: number, index: number) => Buffer> {
  const wanted = nodesFor(ranges);
  const found = new Map<NodeKey, Buffer>();
  for (let i = 0; i < wanted.length; i += 200) {
    const chunk = wanted.slice(i, i + 200);
    const where = chunk.map((_, j) => `("level" = $${j * 2 + 1} AND "idx" = $${j * 2 + 2})`).join(" OR ");
    const rows = await db.raw.query<{ level: number; idx: number | string; hash: Buffer | Uint8Array }>(
      `SELECT "level","idx","hash" FROM "merkle_node" WHERE ${where}`,
      chunk.flatMap((n) => [n.level, n.index]),
    );
    for (const r of rows) found.set(nodeKey(Number(r.level), Number(r.idx)), Buffer.from(r.hash));
  }
  return (level, index) => {
    const hash = found.get(nodeKey(level, index));
    if (!hash) throw new Error(`ledger node ${level}:${index} is missing`);
    return hash;
  };
}

/** Inclusion proof of one of the caller's records against the checkpoint of `treeSize` (default: latest). */
export async function inclusionProof(db: Database, principal: Principal, recordId: string, treeSize?: number) {
  const [record] = await db.raw.query<{ seq: number | string; leaf_hash: string }>(
    `SELECT "seq","leaf_hash" FROM "provenance_record" WHERE "id" = $1 AND "org_did" = $2`,
    [recordId, principal.orgDid],
  );
  if (!record) throw NotFound("provenance record", recordId);
  const checkpoint = treeSize === undefined ? await latestCheckpoint(db) : await checkpointOfSize(db, treeSize);
  if (!checkpoint) {
    if (treeSize === undefined) throw NoCheckpointYet();
    throw ValidationFailed([
      {
        field: "tree_size",
        code: "UNKNOWN_CHECKPOINT",
        message: `No checkpoint of size ${treeSize}; use a size from GET /v1/provenance/checkpoint.`,
      },
    ]);
  }
  const seq = Number(record.seq);
  if (seq >= checkpoint.treeSize) {
    if (treeSize !== undefined)
      throw ValidationFailed([
        { field: "tree_size", code: "OUT_OF_RANGE", message: `Record ${seq} is not in a tree of ${treeSize} leaves.` },
      ]);
    throw NotYetCheckpointed();
  }
  const ranges = inclusionRanges(seq, checkpoint.treeSize);
  const node = await fetchNodes(db, ranges);
  return {
    record_id: recordId,
    leaf_index: seq,
    tree_size: checkpoint.treeSize,
    leaf_hash: record.leaf_hash,
    inclusion_path: ranges.map(([s, e]) => rangeHash(s, e, node).toString("base64")),
    checkpoint: checkpoint.note,
  };
}

/** Consistency proof between two tree sizes (RFC 9162 §2.1.4), both at most the latest checkpoint's. */
export async function consistencyProof(db: Database, from: number, to: number) {
  if (from > to)
    throw ValidationFailed([{ field: "from", code: "OUT_OF_RANGE", message: "from must not be greater than to." }]);
  const latest = await latestCheckpoint(db);
  if (!latest) throw NoCheckpointYet();
  if (to > latest.treeSize)
    throw ValidationFailed([
      {
        field: "to",
        code: "OUT_OF_RANGE",
        message: `to must be at most the latest checkpoint's size, ${latest.treeSize}.`,
      },
    ]);
  const ranges = consistencyRanges(from, to);
  const node = await fetchNodes(db, ranges);
  return {
    from_size: from,
    to_size: to,
    consistency_path: ranges.map(([s, e]) => rangeHash(s, e, node).toString("base64")),
  };
}
