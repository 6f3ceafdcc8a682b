import canonicalize from "canonicalize";
import { hashLeaf } from "../provenance/record";
import { CompactLineChecker } from "./compactLine";
import { CompactRange } from "./compactRange";

/**
 * The per-record half of `svc verify --export`, on one run of whole lines: each line parsed, its
 * place checked against the first record's, its leaf hash recomputed from its content (RFC 8785
 * canonical JSON less leaf_hash), and the interior of the tree over the run hashed. It is pure,
 * so the verifier runs it inline or on worker threads (leafWorker.ts) and joins the runs' pieces
 * of the tree in order on the main thread. It stops at the run's first failure; the caller words
 * it, because only it knows the line numbers and leaf index before the run.
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
  /**
   * The tree over the records that passed, as a compact range from the first record's seq
   * (CompactRange's heights and hashes, 32 bytes each), when that seq is a leaf index and every
   * claimed hash is 32 bytes; the caller takes it when its tree has reached that seq.
   */
  range?: { start: number; heights: number[]; hashes: Uint8Array };
  failure?: ChunkFailure;
}

export function recomputeLeaf(record: Record<string, unknown>): Buffer {
  const { leaf_hash: _omit, ...rest } = record;
  return hashLeaf(Buffer.from(canonicalize(rest)!, "utf8"));
}

interface Run {
  result: ChunkResult;
  firstSeq: number | null;
}

/** Kept across runs: it remembers the export's key order. */
// not state: a memo of the key order that only makes checks faster (any copy answers alike).
const compact = new CompactLineChecker();

/**
 * Checks a run of lines, split as node:readline does (LF, CRLF or CR; a final line break ends
 * the last line). A line the export wrote compactly with canonical members is checked from its
 * bytes (compactLine.ts); any other, and every failure, the general way (checkLine), line by line.
 */
export function hashChunk(bytes: Uint8Array): ChunkResult {
  const text = compact.load(bytes);
  const result: ChunkResult = {
    lines: 0,
    records: 0,
    redacted: 0,
    leaves: new Uint8Array(32 * Math.max(64, Math.ceil(text.length / 256))),
    odd: [],
  };
  const run: Run = { result, firstSeq: null };
  for (let p = 0; p < text.length;) {
    if (!result.failure && run.firstSeq !== null && result.records > 0) {
      reserve(result);
      const verdict = compact.check(p, run.firstSeq + result.records, result.leaves, result.records * 32);
      if (verdict) {
        if (verdict !== "record") {
          result.redacted++;
          if (verdict.redacted.length === 32) result.leaves.set(verdict.redacted, result.records * 32);
          else result.odd.push([result.records, verdict.redacted]);
        }
        result.lines++;
        result.records++;
        p = compact.next;
        continue;
      }
    }
    const lf = text.indexOf(10, p);
    const stop = lf < 0 ? text.length : lf;
    const next = lf < 0 ? text.length : lf + 1;
    // The general way: [p, stop) may hold more lines, ended by a lone CR (a CR just before the LF
    // ends the last of them, with the LF).
    for (let s = p; ;) {
      let e = s;
      while (e < stop && text[e] !== 13) e++;
      if (e === stop && s === stop && s > p) break;
      result.lines++;
      if (!result.failure) checkLine(text.toString("utf8", s, e), result.lines, run);
      if (e === stop) break;
      s = e + 1;
    }
    p = next;
  }
  result.leaves = result.leaves.subarray(0, result.records * 32);
  const start = result.first?.seq;
  if (
    start != null &&
    Number.isSafeInteger(start) &&
    start >= 0 &&
    Number.isSafeInteger(start + result.records) &&
    result.records > 0 &&
    result.odd.length === 0
  ) {
    const range = new CompactRange(start);
    for (let i = 0; i < result.records; i++) range.push(result.leaves.subarray(i * 32, i * 32 + 32));
    const hashes = new Uint8Array(range.hashes.length * 32);
    range.hashes.forEach((h, i) => hashes.set(h, i * 32));
    result.range = { start, heights: range.heights, hashes };
  }
  return result;
}

/** Room for one more claimed hash. */
function reserve(result: ChunkResult): void {
  if ((result.records + 1) * 32 <= result.leaves.length) return;
  const grown = new Uint8Array(result.leaves.length * 2);
  grown.set(result.leaves);
  result.leaves = grown;
}

/** The general check of one line: parsed, placed, and its leaf hash recomputed through canonicalize(). */
function checkLine(line: string, lineNo: number, run: Run): void {
  const result = run.result;
  if (line.trim() === "") return;
  const n = result.records;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    result.failure = { record: n, line: lineNo, kind: "json", seq: "" };
    return;
  }
  const label = { seq: String(record.seq), id: record.id ? String(record.id) : undefined, line: lineNo };
  if (n === 0) {
    run.firstSeq = typeof record.seq === "number" ? record.seq : null;
    result.first = { seq: run.firstSeq, seqText: label.seq, id: label.id, line: label.line };
  } else if (record.seq !== (run.firstSeq ?? NaN) + n) {
    result.failure = { record: n, kind: "seq", ...label };
    return;
  }
  if (typeof record.leaf_hash !== "string") {
    result.failure = { record: n, kind: "noleaf", ...label };
    return;
  }
  const claimed = Buffer.from(record.leaf_hash, "base64");
  if (record.redacted === true) {
    // A redacted line may carry nothing but its place and hash; content beside it would go unchecked.
    if (Object.keys(record).some((k) => k !== "seq" && k !== "leaf_hash" && k !== "redacted")) {
      result.failure = { record: n, kind: "redacted-content", ...label };
      return;
    }
    result.redacted++;
  } else if (!recomputeLeaf(record).equals(claimed)) {
    result.failure = { record: n, kind: "altered", ...label };
    return;
  }
  reserve(result);
  if (claimed.length === 32) result.leaves.set(claimed, n * 32);
  else result.odd.push([n, claimed]);
  result.records++;
}
