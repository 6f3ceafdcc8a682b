import { existsSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { CompactRange } from "./compactRange";
import { hashChunk, recomputeLeaf, type ChunkFailure, type ChunkResult } from "./leafChunk";
import { verifyConsistency, verifyInclusion } from "./proofs";
import { verifyCheckpoint, type ParsedCheckpoint, type VerifierKey } from "./note";

/**
 * `npx svc verify`: checks an NDJSON export against signed checkpoints with nothing but the
 * service's public verifier key (or keys, across a rotation of the ledger's key). Every record's leaf hash is recomputed from its content (RFC 8785
 * canonical JSON less leaf_hash), the tree is rebuilt leaf by leaf, and each checkpoint's root is
 * compared at its size. Records are hashed, and the tree's interior over each run of them, on
 * worker threads (one per core) for a large export; the main thread joins the runs' pieces of the
 * tree in file order. The first failure is reported with the record or checkpoint it concerns.
 */
export class VerificationFailure extends Error {}

export interface ExportReport {
  records: number;
  redacted: number;
  checkpoints: { treeSize: number; root: string }[];
}

/** Bytes per run of lines handed to a worker (about 2,000 records of a typical export). */
const RUN_BYTES = 1 << 20;

/**
 * Worker threads for an export of this size: SVC_VERIFY_THREADS when set (0 checks inline), else
 * one per core from 8 MiB up (below that, starting threads costs more than they save). Threads
 * need the compiled worker (dist/cli/verify-worker.mjs beside the CLI bundle); from the sources
 * the export is checked inline.
 */
function verifyThreads(bytes: number): number {
  const set = process.env.SVC_VERIFY_THREADS;
  if (set !== undefined && set !== "") return Math.max(0, Math.floor(Number(set)) || 0);
  return bytes >= 8 << 20 ? Math.min(availableParallelism(), 8) : 0;
}

interface Pool {
  size: number;
  /** Checks a run on a worker; `bytes` must be the only view of its ArrayBuffer, which moves to the worker. */
  run(bytes: Buffer): Promise<ChunkResult>;
  close(): Promise<void>;
}

/** Round-robin over n workers; each answers its runs in the order sent, so one queue per worker. */
function startPool(n: number): Pool | null {
  const script = new URL("./verify-worker.mjs", import.meta.url);
  if (n <= 0 || script.protocol !== "file:" || !existsSync(script)) return null;
  const workers = Array.from({ length: n }, () => {
    const waiting: { resolve: (r: ChunkResult) => void; reject: (e: Error) => void }[] = [];
    const worker = new Worker(script);
    worker.on("message", (r: ChunkResult) => waiting.shift()?.resolve(r));
    worker.on("error", (e) => waiting.splice(0).forEach((w) => w.reject(e)));
    return { worker, waiting };
  });
  let next = 0;
  return {
    size: n,
    run(bytes) {
      const w = workers[next++ % n]!;
      return new Promise<ChunkResult>((resolve, reject) => {
        w.waiting.push({ resolve, reject });
        w.worker.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.worker.terminate()));
    },
  };
}

function failureMessage(f: ChunkFailure, linesBefore: number, leafIndex: number): string {
  const line = linesBefore + f.line;
  if (f.kind === "json") return `line ${line}: not JSON`;
  const label = `record seq ${f.seq}${f.id ? ` (${f.id})` : ""}, line ${line}`;
  switch (f.kind) {
    case "seq":
      return `${label}: expected leaf index ${leafIndex}${leafIndex === 0 ? " (an export to verify must start at 0)" : ""}: records are missing, reordered or duplicated`;
    case "noleaf":
      return `${label}: no leaf_hash`;
    case "redacted-content":
      return `${label}: a redacted record carries content`;
    case "altered":
      return `${label}: its content does not match its leaf_hash (the record was altered)`;
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
  const builder = new CompactRange();
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
  const consume = (r: ChunkResult) => {
    if (r.first && r.first.seq !== builder.size) {
      const label = `record seq ${r.first.seqText}${r.first.id ? ` (${r.first.id})` : ""}, line ${lineNo + r.first.line}`;
      throw new VerificationFailure(
        `${label}: expected leaf index ${builder.size}${builder.size === 0 ? " (an export to verify must start at 0)" : ""}: records are missing, reordered or duplicated`,
      );
    }
    const end = builder.size + r.records;
    // The run's piece of the tree joins whole unless a checkpoint falls inside it (its root needs
    // the leaves one by one).
    if (r.range?.start === builder.size && !(pending < checkpoints.length && checkpoints[pending]!.treeSize < end)) {
      r.range.heights.forEach((h, i) => builder.pushNode(h, r.range!.hashes.subarray(i * 32, i * 32 + 32)));
      checkRoots();
    } else {
      const odd = new Map(r.odd);
      for (let i = 0; i < r.records; i++) {
        builder.push(odd.get(i) ? Buffer.from(odd.get(i)!) : r.leaves.subarray(i * 32, i * 32 + 32));
        checkRoots();
      }
    }
    redacted += r.redacted;
    if (r.failure) throw new VerificationFailure(failureMessage(r.failure, lineNo, builder.size));
    lineNo += r.lines;
  };
  const size = statSync(exportFile).size;
  const file = await open(exportFile, "r");
  const pool = startPool(verifyThreads(size));
  try {
    // Runs of whole lines (cut after a line feed, so a CRLF or a UTF-8 sequence is never split),
    // each read into a buffer of its own that moves to a worker, checked in parallel and consumed
    // in file order. A few runs in flight at a time: the export is never held whole.
    const inFlight: Promise<ChunkResult>[] = [];
    const limit = pool ? pool.size * 3 : 1;
    const dispatch = async (bytes: Buffer) => {
      const run = pool ? pool.run(bytes) : Promise.resolve(hashChunk(bytes));
      // A worker's error (an input canonicalize() refuses) rejects every run it holds; the first
      // in file order is reported, as inline, and the others behind it are never consumed.
      run.catch(() => {});
      inFlight.push(run);
      while (inFlight.length >= limit) consume(await inFlight.shift()!);
    };
    // Buffers of their own (never slices of Node's shared pool): a run's buffer is moved.
    const own = (n: number) => Buffer.allocUnsafeSlow(n);
    let carry: Buffer = Buffer.alloc(0);
    for (;;) {
      const buf = own(carry.length + RUN_BYTES);
      carry.copy(buf);
      const { bytesRead } = await file.read(buf, carry.length, RUN_BYTES, null);
      if (bytesRead === 0) break;
      const filled = carry.length + bytesRead;
      const cut = buf.lastIndexOf(10, filled - 1);
      if (cut < 0) {
        carry = buf.subarray(0, filled); // one line longer than a run so far: read on
        continue;
      }
      carry = Buffer.from(buf.subarray(cut + 1, filled));
      await dispatch(buf.subarray(0, cut + 1));
    }
    if (carry.length) {
      const last = own(carry.length);
      carry.copy(last);
      await dispatch(last);
    }
    while (inFlight.length) consume(await inFlight.shift()!);
  } finally {
    await file.close();
    await pool?.close();
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
