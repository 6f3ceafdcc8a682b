import type { Database } from "../db/client";
import { sqliteTimestamp } from "../db/raw";
import type { RawQueryable } from "../db/raw";
import { hashChildren } from "../provenance/record";
import { perfectParts } from "./merkle";
import { checkpointBody, signNote } from "./note";
import { ledgerIdentity } from "./origin";

/**
 * The tree builder: extends the ledger's Merkle tree with the records appended since its last
 * round, stores every perfect subtree that became complete, and signs a checkpoint of the new
 * size. Rounds are serialized across processes (PostgreSQL advisory lock, SQLite's write lock)
 * and read their starting state from the database, so any number of workers may run it; a
 * checkpoint is only ever issued for a tree that extends the previous one, so no two are
 * inconsistent.
 */
const TREE_LOCK = 0x5376_5472; // "SvTr"
const ROUND_LEAVES = 20_000;

export interface TreeRound {
  treeSize: number;
  added: number;
  checkpoint: boolean;
}

function toBuffer(v: unknown): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array);
}

export async function extendTree(db: Database): Promise<TreeRound> {
  const identity = await ledgerIdentity(db);
  return db.writeLock(() =>
    db.raw.transaction(async (q) => {
      if (db.engine === "postgresql") await q.query(`SELECT pg_advisory_xact_lock(${TREE_LOCK})::text`);
      const [{ size }] = (await q.query<{ size: number | string }>(
        `SELECT COALESCE(MAX("idx") + 1, 0) AS "size" FROM "merkle_node" WHERE "level" = 0`,
      )) as [{ size: number | string }];
      const start = Number(size);
      const stack = await loadRightEdge(q, start);
      const leaves = await q.query<{ seq: number | string; leaf_hash: string }>(
        `SELECT "seq", "leaf_hash" FROM "provenance_record" WHERE "seq" >= $1 ORDER BY "seq" LIMIT ${ROUND_LEAVES}`,
        [start],
      );
      const nodes: [number, number, Buffer][] = [];
      let size2 = start;
      for (const leaf of leaves) {
        if (Number(leaf.seq) !== size2) break; // only a contiguous prefix is ever visible; stop at a gap
        let node: { level: number; index: number; hash: Buffer } = {
          level: 0,
          index: size2,
          hash: Buffer.from(leaf.leaf_hash, "base64"),
        };
        nodes.push([0, size2, node.hash]);
        // Merge equal-sized neighbours: each merge completes one perfect subtree.
        while (stack.length > 0 && stack[stack.length - 1]!.level === node.level) {
          const left = stack.pop()!;
          node = { level: node.level + 1, index: left.index / 2, hash: hashChildren(left.hash, node.hash) };
          nodes.push([node.level, node.index, node.hash]);
        }
        stack.push(node);
        size2++;
      }
      for (let i = 0; i < nodes.length; i += 300) {
        const chunk = nodes.slice(i, i + 300);
        const values = chunk.map((_, j) => `($${j * 3 + 1},$${j * 3 + 2},$${j * 3 + 3})`).join(",");
        await q.execute(`INSERT INTO "merkle_node" ("level","idx","hash") VALUES ${values}`, chunk.flat());
      }
      if (size2 === 0) return { treeSize: 0, added: 0, checkpoint: false };
      const [latest] = await q.query<{ tree_size: number | string }>(
        `SELECT MAX("tree_size") AS "tree_size" FROM "ledger_checkpoint"`,
      );
      if (latest?.tree_size !== null && latest?.tree_size !== undefined && Number(latest.tree_size) >= size2)
        return { treeSize: size2, added: 0, checkpoint: false };
      let root = stack[stack.length - 1]!.hash;
      for (let i = stack.length - 2; i >= 0; i--) root = hashChildren(stack[i]!.hash, root);
      const note = signNote(
        checkpointBody(identity.origin, size2, root),
        identity.origin,
        identity.privateKey,
        identity.publicKey,
      );
      const now = new Date();
      await q.execute(
        `INSERT INTO "ledger_checkpoint" ("tree_size","root_hash","note","created_at") VALUES ($1,$2,$3,$4)`,
        [size2, root.toString("base64"), note, db.engine === "sqlite" ? sqliteTimestamp(now) : now],
      );
      return { treeSize: size2, added: size2 - start, checkpoint: true };
    }),
  );
}

/** The perfect subtrees of a tree of `size` leaves, left to right: the builder's starting stack. */
async function loadRightEdge(q: RawQueryable, size: number): Promise<{ level: number; index: number; hash: Buffer }[]> {
  if (size === 0) return [];
  const parts = perfectParts(0, size);
  const where = parts.map((_, i) => `("level" = $${i * 2 + 1} AND "idx" = $${i * 2 + 2})`).join(" OR ");
  const rows = await q.query<{ level: number; idx: number | string; hash: Buffer }>(
    `SELECT "level","idx","hash" FROM "merkle_node" WHERE ${where}`,
    parts.flatMap((p) => [p.level, p.index]),
  );
  const byKey = new Map(rows.map((r) => [`${r.level}:${Number(r.idx)}`, toBuffer(r.hash)]));
  return parts.map((p) => {
    const hash = byKey.get(`${p.level}:${p.index}`);
    if (!hash) throw new Error(`ledger tree is missing node ${p.level}:${p.index}`);
    return { ...p, hash };
  });
}

/** Extends the tree until it covers every record appended so far (bounded rounds). */
export async function catchUp(db: Database, maxRounds = 1000): Promise<TreeRound> {
  let last: TreeRound = { treeSize: 0, added: 0, checkpoint: false };
  for (let i = 0; i < maxRounds; i++) {
    last = await extendTree(db);
    if (last.added < ROUND_LEAVES) break;
  }
  return last;
}
