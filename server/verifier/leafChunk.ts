import canonicalize from "canonicalize";
import { hashLeaf } from "../provenance/record";

/**
 * The per-record half of `svc verify --export`, on one run of whole lines: each line parsed, its
 * place checked against the first record's, its leaf hash recomputed from its content (RFC 8785
 * canonical JSON less leaf_hash). It is pure, so the verifier runs it inline or on worker threads
 * (leafWorker.ts) and rebuilds the tree from the claimed hashes in order on the main thread. It
 * stops at the run's first failure; the caller words it, because only it knows the line numbers
 * and leaf index before the run.
 */
export interface ChunkFailure {
  /** Index of the failing record within the run (records before it passed). */
  record: number;
  /** 1-based line within the run. */
  line: number;
  kind: "json" | "seq" | "noleaf" | "redacted-content" | "altered";
  seq: string;
  id?: string;
}

export interface ChunkResult {
  /** Lines in the run, blank ones included (the caller's line count moves by this). */
  lines: number;
  /** Records that passed, in order. */
  records: number;
  redacted: number;
  /** The first record's seq (null when it is not a number) and label, for the caller's place check. */
  first?: { seq: number | null; seqText: string; id?: string; line: number };
  /** The claimed leaf hashes of the records that passed, 32 bytes each. */
  leaves: Uint8Array;
  /** Claimed hashes that are not 32 bytes (a redacted line may claim any), by record index. */
  odd: [number, Uint8Array][];
  failure?: ChunkFailure;
}

export function recomputeLeaf(record: Record<string, unknown>): Buffer {
  const { leaf_hash: _omit, ...rest } = record;
  return hashLeaf(Buffer.from(canonicalize(rest)!, "utf8"));
}

/** Checks a run of lines (split as node:readline does; a final line break ends the last line). */
export function hashChunk(text: string): ChunkResult {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const leaves = new Uint8Array(lines.length * 32);
  const odd: [number, Uint8Array][] = [];
  const result: ChunkResult = { lines: lines.length, records: 0, redacted: 0, leaves, odd };
  let firstSeq: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    const n = result.records;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      result.failure = { record: n, line: i + 1, kind: "json", seq: "" };
      break;
    }
    const label = { seq: String(record.seq), id: record.id ? String(record.id) : undefined, line: i + 1 };
    if (n === 0) {
      firstSeq = typeof record.seq === "number" ? record.seq : null;
      result.first = { seq: firstSeq, seqText: label.seq, id: label.id, line: label.line };
    } else if (record.seq !== (firstSeq ?? NaN) + n) {
      result.failure = { record: n, kind: "seq", ...label };
      break;
    }
    if (typeof record.leaf_hash !== "string") {
      result.failure = { record: n, kind: "noleaf", ...label };
      break;
    }
    const claimed = Buffer.from(record.leaf_hash, "base64");
    if (record.redacted === true) {
      // A redacted line may carry nothing but its place and hash; content beside it would go unchecked.
      if (Object.keys(record).some((k) => k !== "seq" && k !== "leaf_hash" && k !== "redacted")) {
        result.failure = { record: n, kind: "redacted-content", ...label };
        break;
      }
      result.redacted++;
    } else if (!recomputeLeaf(record).equals(claimed)) {
      result.failure = { record: n, kind: "altered", ...label };
      break;
    }
    if (claimed.length === 32) leaves.set(claimed, n * 32);
    else odd.push([n, claimed]);
    result.records++;
  }
  return result;
}
