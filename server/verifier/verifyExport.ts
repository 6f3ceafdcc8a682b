import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import canonicalize from "canonicalize";
import { hashChildren, hashLeaf } from "../provenance/record";
import { verifyConsistency, verifyInclusion } from "./proofs";
import { verifyCheckpoint, type ParsedCheckpoint, type VerifierKey } from "./note";

/**
 * `npx svc verify`: checks an NDJSON export against signed checkpoints with nothing but the
 * service's public verifier key (or keys, across a rotation of the ledger's key). Every record's leaf hash is recomputed from its content (RFC 8785
 * canonical JSON less leaf_hash), the tree is rebuilt leaf by leaf, and each checkpoint's root is
 * compared at its size. The first failure is reported with the record or checkpoint it concerns.
 */
export class VerificationFailure extends Error {}

export interface ExportReport {
  records: number;
  redacted: number;
  checkpoints: { treeSize: number; root: string }[];
}

function recomputeLeaf(record: Record<string, unknown>): Buffer {
  const { leaf_hash: _omit, ...rest } = record;
  return hashLeaf(Buffer.from(canonicalize(rest)!, "utf8"));
}

/** A compact range: the roots of the perfect subtrees of the leaves seen so far. */
class RootBuilder {
  private stack: { height: number; hash: Buffer }[] = [];
  size = 0;
  push(leaf: Buffer): void {
    let node = { height: 0, hash: leaf };
    while (this.stack.length && this.stack[this.stack.length - 1]!.height === node.height) {
      const left = this.stack.pop()!;
      node = { height: node.height + 1, hash: hashChildren(left.hash, node.hash) };
    }
    this.stack.push(node);
    this.size++;
  }
  root(): Buffer {
    let acc = this.stack[this.stack.length - 1]!.hash;
    for (let i = this.stack.length - 2; i >= 0; i--) acc = hashChildren(this.stack[i]!.hash, acc);
    return acc;
  }
}

export async function verifyExport(
  exportFile: string,
  notes: { file: string; text: string }[],
  key: VerifierKey | VerifierKey[],
  consistency: { from_size: number; to_size: number; consistency_path: string[] }[] = [],
): Promise<ExportReport> {
  const checkpoints: (ParsedCheckpoint & { file: string })[] = [];
  for (const n of notes) {
    try {
      checkpoints.push({ ...verifyCheckpoint(n.text, key), file: n.file });
    } catch (e) {
      throw new VerificationFailure(`checkpoint ${n.file}: ${(e as Error).message}`);
    }
  }
  checkpoints.sort((a, b) => a.treeSize - b.treeSize);
  const builder = new RootBuilder();
  const verified: { treeSize: number; root: string }[] = [];
  let pending = 0;
  const checkRoots = () => {
    while (pending < checkpoints.length && checkpoints[pending]!.treeSize === builder.size) {
      const cp = checkpoints[pending]!;
      if (!builder.root().equals(cp.rootHash))
        throw new VerificationFailure(
          `checkpoint ${cp.file} (tree size ${cp.treeSize}): its root does not match the root rebuilt from records 0..${cp.treeSize - 1}`,
        );
      verified.push({ treeSize: cp.treeSize, root: cp.rootHash.toString("base64") });
      pending++;
    }
  };
  while (pending < checkpoints.length && checkpoints[pending]!.treeSize === 0) pending++;

  let redacted = 0;
  let lineNo = 0;
  const lines = createInterface({ input: createReadStream(exportFile), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === "") continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      throw new VerificationFailure(`line ${lineNo}: not JSON`);
    }
    const seq = record.seq;
    const label = `record seq ${String(seq)}${record.id ? ` (${String(record.id)})` : ""}, line ${lineNo}`;
    if (seq !== builder.size) {
      throw new VerificationFailure(
        `${label}: expected leaf index ${builder.size}${builder.size === 0 ? " (an export to verify must start at 0)" : ""}: records are missing, reordered or duplicated`,
      );
    }
    if (typeof record.leaf_hash !== "string") throw new VerificationFailure(`${label}: no leaf_hash`);
    const claimed = Buffer.from(record.leaf_hash, "base64");
    if (record.redacted === true) {
      // A redacted line may carry nothing but its place and hash; content beside it would go unchecked.
      if (Object.keys(record).some((k) => k !== "seq" && k !== "leaf_hash" && k !== "redacted"))
        throw new VerificationFailure(`${label}: a redacted record carries content`);
      redacted++;
    } else if (!recomputeLeaf(record).equals(claimed))
      throw new VerificationFailure(`${label}: its content does not match its leaf_hash (the record was altered)`);
    builder.push(claimed);
    checkRoots();
  }
  if (pending < checkpoints.length) {
    const cp = checkpoints[pending]!;
    throw new VerificationFailure(
      `checkpoint ${cp.file} (tree size ${cp.treeSize}): the export holds only ${builder.size} records, so its root cannot be rebuilt (export more, or verify that checkpoint with a consistency proof)`,
    );
  }
  // Checkpoints rebuilt from one sequence of leaves are consistent with each other by construction;
  // consistency proofs given on top (e.g. from GET /v1/provenance/consistency) are checked too.
  for (const proof of consistency) {
    const a = checkpoints.find((c) => c.treeSize === proof.from_size);
    const b = checkpoints.find((c) => c.treeSize === proof.to_size);
    if (!a || !b)
      throw new VerificationFailure(
        `consistency proof ${proof.from_size}→${proof.to_size}: no checkpoint given for one of its sizes`,
      );
    if (
      !verifyConsistency(
        a.treeSize,
        b.treeSize,
        a.rootHash,
        b.rootHash,
        proof.consistency_path.map((p) => Buffer.from(p, "base64")),
      )
    ) {
      throw new VerificationFailure(
        `checkpoints ${a.file} and ${b.file}: the consistency proof ${a.treeSize}→${b.treeSize} does not hold`,
      );
    }
  }
  return { records: builder.size, redacted, checkpoints: verified };
}

/** One record's inclusion, on its own: the record, its proof (GET /v1/provenance/{id}/proof) and the key. */
export function verifyRecordInclusion(
  record: Record<string, unknown>,
  proof: { leaf_index: number; tree_size: number; leaf_hash: string; inclusion_path: string[]; checkpoint: string },
  key: VerifierKey | VerifierKey[],
): { treeSize: number } {
  let cp: ParsedCheckpoint;
  try {
    cp = verifyCheckpoint(proof.checkpoint, key);
  } catch (e) {
    throw new VerificationFailure(`the proof's checkpoint: ${(e as Error).message}`);
  }
  const leaf = recomputeLeaf(record);
  if (typeof record.leaf_hash === "string" && !leaf.equals(Buffer.from(record.leaf_hash, "base64")))
    throw new VerificationFailure(`record ${String(record.id)}: its content does not match its leaf_hash`);
  if (!leaf.equals(Buffer.from(proof.leaf_hash, "base64")))
    throw new VerificationFailure(`record ${String(record.id)}: it is not the leaf the proof is about`);
  if (record.seq !== proof.leaf_index)
    throw new VerificationFailure(
      `record ${String(record.id)}: its seq ${String(record.seq)} is not the proof's leaf index ${proof.leaf_index}`,
    );
  if (cp.treeSize !== proof.tree_size)
    throw new VerificationFailure(
      `the proof is for tree size ${proof.tree_size} but its checkpoint is of size ${cp.treeSize}`,
    );
  if (
    !verifyInclusion(
      proof.leaf_index,
      proof.tree_size,
      leaf,
      proof.inclusion_path.map((p) => Buffer.from(p, "base64")),
      cp.rootHash,
    )
  ) {
    throw new VerificationFailure(
      `record ${String(record.id)}: the inclusion proof does not lead to the checkpoint's root`,
    );
  }
  return { treeSize: cp.treeSize };
}
