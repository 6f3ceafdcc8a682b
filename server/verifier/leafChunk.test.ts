import { describe, expect, it } from "vitest";
import canonicalize from "canonicalize";
import { hashLeaf, sealRecord, type ProvenanceRecord } from "../provenance/record";
import { CompactLineChecker } from "./compactLine";
import { hashChunk, recomputeLeaf, type ChunkResult } from "./leafChunk";

/**
 * hashChunk checks most lines straight from their bytes (compactLine.ts) and the rest through
 * JSON.parse and canonicalize(). Whatever a line holds, the answer must be the one the general
 * check alone gives: this oracle is that check as it was before the byte path existed.
 */
function oracle(text: string): Omit<ChunkResult, "range"> {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const leaves = new Uint8Array(lines.length * 32);
  const result: Omit<ChunkResult, "range"> = { lines: lines.length, records: 0, redacted: 0, leaves, odd: [] };
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
    else result.odd.push([n, claimed]);
    result.records++;
  }
  return result;
}

function record(seq: number, traced = false): ProvenanceRecord {
  return sealRecord(
    {
      org_did: "did:web:svc.example:org:a",
      actor_did: seq % 5 === 0 ? null : `did:web:svc.example:agent:${seq % 7}`,
      delegation_id: `dlg_${seq % 3}`,
      grantor_did: "did:web:svc.example:user:owner",
      capability: "svc_api:executions:create",
      operation: "executions.create",
      resource_type: "execution",
      resource_id: `exe_${seq}`,
      decision: seq % 4 === 0 ? "denied" : "allowed",
      status: seq % 4 === 0 ? 403 : 201,
      request_hash: "9f".repeat(32),
      request_id: `req_${seq}`,
      ...(traced ? { trace_id: "ab".repeat(16) } : {}),
    },
    `prv_${seq}`,
    seq,
    new Date(Date.UTC(2026, 10, 1) + seq * 1000),
  );
}

/** A record line written with its leaf hash recomputed from what the line now says. */
function resealed(r: Record<string, unknown>): string {
  const { leaf_hash: _x, ...rest } = r;
  return JSON.stringify({ ...rest, leaf_hash: hashLeaf(Buffer.from(canonicalize(rest)!, "utf8")).toString("base64") });
}

/**
 * The line with its leaf_hash replaced by the hash of its members as written (leaf_hash left
 * out, sorted by their raw key bytes): what a check that trusted the line's own spelling of each
 * member would accept. The general check accepts it only where that spelling is canonical.
 */
function forged(line: Buffer): Buffer {
  if (line[0] !== 0x7b || line[line.length - 1] !== 0x7d) return line;
  const members: Buffer[] = [];
  let depth = 0;
  let inString = false;
  let from = 1;
  for (let p = 1; p < line.length - 1; p++) {
    const c = line[p];
    if (inString) {
      if (c === 0x5c) p++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c && depth === 0) {
      members.push(line.subarray(from, p));
      from = p + 1;
    }
  }
  members.push(line.subarray(from, line.length - 1));
  const key = (m: Buffer) => m.subarray(0, m.indexOf(0x3a)).toString("latin1");
  const kept = members.filter((m) => key(m) !== '"leaf_hash"').sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const leaf = hashLeaf(
    Buffer.concat([Buffer.from("{"), ...kept.flatMap((m, i) => (i ? [Buffer.from(","), m] : [m])), Buffer.from("}")]),
  );
  return Buffer.concat([
    Buffer.from("{"),
    ...kept.flatMap((m) => [m, Buffer.from(",")]),
    Buffer.from(`"leaf_hash":"${leaf.toString("base64")}"}`),
  ]);
}

const redactedLine = (seq: number, leaf: string) => JSON.stringify({ seq, leaf_hash: leaf, redacted: true });

/** Ways to write line `seq` (valid or not, canonical or not); each returns the line's text. */
const variants: ((seq: number) => string)[] = [
  (s) => JSON.stringify(record(s)),
  (s) => JSON.stringify(record(s, true)),
  (s) => redactedLine(s, record(s).leaf_hash),
  (s) => redactedLine(s, "c2hvcnQ="), // a claimed hash of 5 bytes
  (s) => JSON.stringify({ ...record(s), leaf_hash: record(s + 1).leaf_hash }), // altered
  (s) => JSON.stringify({ ...record(s), status: 299 }),
  (s) => JSON.stringify(record(s)).replace(/":/g, '": '), // spaces
  (s) => ` ${JSON.stringify(record(s))}\t`,
  (s) => canonicalize(record(s))!, // another key order
  (s) => JSON.stringify(record(s)).replace('"operation":"executions.create"', '"operation":"ex\\u0065cutions.create"'),
  (s) =>
    JSON.stringify(record(s)).replace('"org_did":"did:web:svc.example:org:a"', '"org_did":"did:web:svc.example\\/org"'),
  (s) => resealed({ ...record(s), resource_id: "exé_ü😀" }),
  (s) => resealed({ ...record(s), resource_id: "tab\there\u007f" }),
  (s) => JSON.stringify(record(s)).replace('"executions.create"', '"executions\tcreate\u0001"'), // raw control characters
  (s) => resealed({ ...record(s), status: 200.5 }),
  (s) => JSON.stringify(record(s)).replace(/"status":(\d+)/, '"status":$1.0'),
  (s) => JSON.stringify(record(s)).replace(/"status":(\d+)/, '"status":$1e0'),
  (s) => resealed({ ...record(s), status: 0 }),
  (s) => resealed({ ...record(s), status: -7 }),
  (s) => resealed({ ...record(s), status: 123456789012345 }),
  (s) => resealed({ ...record(s), status: 1234567890123456789 }),
  (s) => JSON.stringify(record(s)).replace(/"status":\d+/, '"status":12345678901234567'), // not exact as a double
  (s) => JSON.stringify(record(s)).replace(/"status":\d+/, '"status":9007199254740993'),
  (s) => resealed({ ...record(s), status: 0 }).replace('"status":0', '"status":-0'),
  (s) => resealed({ ...record(s), extra: { nested: [1, "a"] } }),
  (s) => resealed({ ...record(s), extra: true, more: false, none: null }),
  (s) => resealed({ ...record(s), "": "empty key", "~": 1, A: 2 }),
  (s) => JSON.stringify(record(s)).replace('"status":', '"status":200,"status":'), // duplicate key
  (s) => JSON.stringify({ ...record(s), leaf_hash: record(s).leaf_hash.replace(/=$/, "") }),
  (s) => JSON.stringify({ ...record(s), leaf_hash: record(s).leaf_hash.replace(/\+/g, "-").replace(/\//g, "_") }),
  (s) => JSON.stringify({ ...record(s), leaf_hash: ` ${record(s).leaf_hash}` }),
  (s) => JSON.stringify({ ...record(s), leaf_hash: 7 }),
  (s) => JSON.stringify((({ leaf_hash: _x, ...rest }) => rest)(record(s))),
  (s) => JSON.stringify({ ...record(s), seq: String(s) }),
  (s) => JSON.stringify({ ...record(s), seq: s + 1 }),
  (s) => JSON.stringify(record(s)).replace(`"seq":${s},`, `"seq":${s}.0,`),
  (s) => JSON.stringify({ seq: s, leaf_hash: record(s).leaf_hash, redacted: true, operation: "x" }),
  (s) => JSON.stringify({ seq: s, leaf_hash: record(s).leaf_hash, redacted: false }),
  (s) => JSON.stringify({ seq: s, leaf_hash: record(s).leaf_hash, redacted: "true" }),
  (s) => JSON.stringify({ redacted: true, leaf_hash: record(s).leaf_hash, seq: s }),
  (s) => JSON.stringify({ seq: s, leaf_hash: record(s).leaf_hash, redacted: true, redacted2: 1 }),
  (s) => resealed(JSON.parse(JSON.stringify(record(s)).replace('{"id"', '{"__proto__":"p","id"'))),
  (s) => JSON.stringify(record(s)).slice(0, -3),
  (s) => JSON.stringify(record(s)) + "x",
  (s) => JSON.stringify(record(s)) + "}",
  () => "",
  () => "   ",
  () => "\u00a0\u2028",
  () => "null",
  () => "[1]",
  () => "\ufeff" + JSON.stringify(record(0)),
  (s) => JSON.stringify(record(s)).replace("executions.create", "executions\\ud800.create"), // lone surrogate
];

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** hashChunk's answer and the oracle's, in comparable form (or the error each throws). */
function both(bytes: Buffer): [unknown, unknown] {
  const outcome = (f: () => Omit<ChunkResult, "range">) => {
    try {
      const r = f();
      return {
        ...r,
        leaves: Buffer.from(r.leaves.subarray(0, r.records * 32)).toString("hex"),
        odd: r.odd.map(([i, h]) => [i, Buffer.from(h).toString("hex")]),
      };
    } catch (e) {
      return { error: (e as Error).message };
    }
  };
  const ours = outcome(() => {
    const { range: _range, ...r } = hashChunk(new Uint8Array(bytes));
    return r;
  });
  return [ours, outcome(() => oracle(bytes.toString("utf8")))];
}

describe("hashChunk", () => {
  it("answers every way of writing a line exactly as the general check does", () => {
    for (let v = 0; v < variants.length; v++) {
      for (const start of [0, 5]) {
        const line = Buffer.from(variants[v]!(start + 1), "utf8");
        const invalid = Buffer.concat([line.subarray(0, 30), Buffer.of(0xc3, 0x28), line.subarray(30)]);
        for (const written of [line, forged(line), forged(invalid)]) {
          // The line second (checked from its bytes when it can be), and first.
          const before = Buffer.from(JSON.stringify(record(start)) + "\n");
          const after = Buffer.from("\n" + JSON.stringify(record(start + 2)) + "\n");
          for (const text of [Buffer.concat([before, written, after]), written]) {
            const [ours, expected] = both(text);
            expect(ours, `variant ${v}: ${text.toString()}`).toEqual(expected);
          }
        }
      }
    }
  });

  it("splits lines as the general check does (LF, CRLF, lone CR, blank lines, no final line break)", () => {
    const rec = (s: number) => JSON.stringify(record(s));
    const texts = [
      "",
      "\n",
      "\r",
      "\r\n",
      `${rec(0)}\r\n${rec(1)}\r\n`,
      `${rec(0)}\r${rec(1)}\r`,
      `${rec(0)}\r\r\n\n${rec(1)}\r\r`,
      `\n\n${rec(3)}\n \n${rec(4)}`,
      `${rec(0)}\n${rec(1)}\r\n\r\n`,
    ];
    for (const text of texts) {
      const [ours, expected] = both(Buffer.from(text, "utf8"));
      expect(ours, JSON.stringify(text)).toEqual(expected);
    }
  });

  it("agrees with the general check on random mixes of lines, invalid UTF-8 included", () => {
    const next = random(30);
    for (let round = 0; round < 300; round++) {
      const start = Math.floor(next() * 40);
      const parts: Buffer[] = [];
      const count = 1 + Math.floor(next() * 12);
      for (let i = 0; i < count; i++) {
        const seq = start + i;
        const roll = next();
        const line =
          roll < 0.55
            ? variants[Math.floor(next() * 3)]!(seq)
            : roll < 0.6
              ? JSON.stringify(record(seq + (next() < 0.5 ? 1 : -1)))
              : variants[Math.floor(next() * variants.length)]!(seq);
        let bytes = Buffer.from(line, "utf8");
        if (next() < 0.03) bytes = Buffer.concat([bytes.subarray(0, 20), Buffer.of(0xff, 0xc3), bytes.subarray(20)]);
        parts.push(bytes, Buffer.from(["\n", "\r\n", "\r", "\n\n"][Math.floor(next() * 4)]!));
      }
      const text = Buffer.concat(next() < 0.8 ? parts : parts.slice(0, -1));
      const [ours, expected] = both(text);
      expect(ours, text.toString("utf8")).toEqual(expected);
    }
  });

  it("hands back the tree over its records when the first seq is a leaf index", () => {
    const text = Array.from({ length: 9 }, (_, i) => JSON.stringify(record(3 + i))).join("\n");
    const r = hashChunk(Buffer.from(text));
    expect(r.records).toBe(9);
    // Leaves 3..11: the aligned subtrees [3], [4..7], [8..11].
    expect(r.range).toMatchObject({ start: 3, heights: [0, 2, 2] });
    expect(hashChunk(Buffer.from(redactedLine(0, "c2hvcnQ="))).range).toBeUndefined();
    expect(hashChunk(Buffer.from(JSON.stringify({ ...record(0), seq: "0" }))).range).toBeUndefined();
  });

  it("checks the export's own lines from their bytes, and leaves the others to the general check", () => {
    const checker = new CompactLineChecker();
    const out = new Uint8Array(32);
    const check = (line: string, seq: number) => {
      const text = checker.load(Buffer.from(line));
      return checker.check(0, seq, out, 0);
    };
    for (const traced of [false, true]) {
      const r = record(7, traced);
      expect(check(JSON.stringify(r), 7)).toBe("record");
      expect(Buffer.from(out).toString("base64")).toBe(r.leaf_hash);
    }
    expect(check(redactedLine(7, record(7).leaf_hash), 7)).toEqual({
      redacted: Buffer.from(record(7).leaf_hash, "base64"),
    });
    expect(check(JSON.stringify(record(7)), 8)).toBeNull();
    expect(check(JSON.stringify({ ...record(7), status: 299 }), 7)).toBeNull();
    expect(check(variants[9]!(7), 7)).toBeNull(); // an escape
    expect(check(variants[6]!(7), 7)).toBeNull(); // spaces
  });
});
