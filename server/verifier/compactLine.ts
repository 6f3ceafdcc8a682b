import { isAscii } from "node:buffer";
import { hash } from "node:crypto";

/**
 * The fast way to check one export line: straight from its bytes, without JSON.parse or
 * re-serializing. It applies to a line that is a compact JSON object (as the export writes it)
 * whose every member is already in RFC 8785 canonical form: keys and string values of printable
 * ASCII without escapes, integers of at most 15 digits without a sign on zero, true, false, null.
 * Such a line's canonical JSON less leaf_hash is its own members, leaf_hash left out, sorted by
 * key and joined by commas, so the leaf hash is recomputed from those bytes: the same bytes
 * canonicalize() would produce from the parsed record, and a hash still recomputed from every
 * field (the hash the line claims is only compared with it). A redacted line
 * (`{"seq","leaf_hash","redacted":true}`) is read for its claimed hash. Any other line (escapes,
 * non-ASCII, spaces, fractions, nesting, duplicate or missing keys) and any failure (a wrong seq,
 * a hash that differs or is written in another base64 form) is left to the general check
 * (leafChunk.ts), which decides and words it, so what is reported never depends on which way a
 * line went.
 */

/** Members beyond this go the general way (a record has 16 or 17). */
const MAX_MEMBERS = 64;
/** Room after the run for one line's canonical bytes; a longer line goes the general way. */
const CANON_ROOM = 64 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64 = Uint8Array.from(BASE64, (c) => c.charCodeAt(0));

/**
 * What a set of keys (in the order a line writes them) makes of a line. The export writes every
 * line with one of a few key orders (traced or not, redacted or not), so the last few are kept.
 */
interface KeyLayout {
  /** Each key's bytes, quotes included (printable ASCII: they were scanned as such). */
  keys: Uint8Array[];
  /** A record's keys, a redacted line's (seq, leaf_hash, redacted and nothing else), or neither (duplicates, no seq…). */
  kind: "record" | "redacted" | null;
  /** A record's members in canonical order, leaf_hash left out. */
  order: number[];
  seq: number;
  leafHash: number;
  redacted: number;
}

const LAYOUTS_KEPT = 8;

/**
 * What check() found: nothing it vouches for (the general check decides), a record whose
 * recomputed leaf hash is the one it claims (written to `out`), or a redacted line and the hash
 * it claims.
 */
export type CompactVerdict = null | "record" | { redacted: Buffer };

export class CompactLineChecker {
  /**
   * The run being checked, a line feed after it (every scan stops at a control character, so
   * none needs a bound), and at the end CANON_ROOM bytes where a line's canonical bytes are put
   * together with copyWithin (far cheaper than a loop or a copy between two buffers).
   */
  private work = new Uint8Array(0);
  private text = Buffer.alloc(0);
  private ascii = true;
  /** The next backslash at or after the line being checked (Infinity: none left). */
  private backslash = -1;
  private readonly keyStart = new Int32Array(MAX_MEMBERS);
  private readonly keyEnd = new Int32Array(MAX_MEMBERS);
  private readonly valueEnd = new Int32Array(MAX_MEMBERS);
  /** 0 string, 1 integer, 2 literal. */
  private readonly kind = new Uint8Array(MAX_MEMBERS);
  /** Most recently used first. */
  private layouts: KeyLayout[] = [];

  /** Takes a run of lines: copies it into the checker's buffer and returns that copy, which check() reads. */
  load(run: Uint8Array): Buffer {
    const need = run.length + 1 + CANON_ROOM;
    if (this.work.length < need) this.work = new Uint8Array(Math.max(need, this.work.length * 2));
    this.work.set(run);
    this.work[run.length] = 0x0a;
    this.text = Buffer.from(this.work.buffer, 0, run.length);
    // Whole-run checks in native code, so that the scan looks at each byte once, for a quote or a
    // control character: no byte above 0x7f (a line with one is checked alone) and where the
    // backslashes are (a line with one goes the general way).
    this.ascii = isAscii(this.text);
    this.backslash = -1;
    return this.text;
  }

  /** After a check that vouched for a line: where the next line starts. */
  next = 0;

  /**
   * Checks the line starting at `start` in the loaded run as the record at leaf index `seq`, when
   * it is a compact line it can vouch for (one that ends with its object and a LF or CRLF, or the
   * run); a record's leaf hash is written to out[at, at + 32).
   */
  check(start: number, seq: number, out: Uint8Array, at: number): CompactVerdict {
    const b = this.work;
    const expected = this.layouts[0];
    const members = this.scan(start, expected);
    if (members < 0) return null;
    // The scan passes no control character, so the line feed after the object is the line's.
    const end = this.end;
    const runEnd = this.text.length;
    let next: number;
    if (end === runEnd) next = end;
    else if (b[end] === 0x0a) next = end + 1;
    else if (b[end] === 0x0d && b[end + 1] === 0x0a && end + 1 < runEnd) next = end + 2;
    else return null;
    if (end - start + 2 > CANON_ROOM) return null;
    if (this.backslash < start) {
      const i = this.text.indexOf(BACKSLASH, start);
      this.backslash = i < 0 ? Infinity : i;
    }
    if (this.backslash < end) return null;
    if (!this.ascii && !isAscii(b.subarray(start, end))) return null;
    const layout = members === expected?.keys.length && this.matched ? expected : this.layoutOf(members);
    if (!layout.kind) return null;
    const s = layout.seq;
    if (this.kind[s] !== 1 || integerAt(b, this.keyEnd[s]! + 1, this.valueEnd[s]!) !== seq) return null;
    const l = layout.leafHash;
    if (this.kind[l] !== 0) return null;
    if (layout.kind === "redacted") {
      const r = this.keyEnd[layout.redacted]! + 1;
      if (this.kind[layout.redacted] !== 2 || b[r] !== 0x74) return null; // true
      // The same decoding the general check applies to the same ASCII text.
      this.next = next;
      return {
        redacted: Buffer.from(this.text.toString("latin1", this.keyEnd[l]! + 2, this.valueEnd[l]! - 1), "base64"),
      };
    }
    // "leaf_hash":"<44 characters of base64>"
    if (this.valueEnd[l]! - this.keyEnd[l]! !== 47) return null;

    const c = b.length - CANON_ROOM;
    b[c] = 0; // RFC 9162 leaf prefix
    b[c + 1] = 0x7b;
    let w = c + 2;
    for (const m of layout.order) {
      const from = this.keyStart[m]!;
      const to = this.valueEnd[m]!;
      b.copyWithin(w, from, to);
      w += to - from;
      b[w++] = 0x2c;
    }
    b[w - 1] = 0x7d;
    const digest = hash("sha256", b.subarray(c, w), "binary");
    if (!matchesBase64(digest, b, this.keyEnd[l]! + 2)) return null;
    for (let j = 0; j < 32; j++) out[at + j] = digest.charCodeAt(j);
    this.next = next;
    return "record";
  }

  /** Whether the last scan found exactly the expected layout's keys. */
  private matched = false;
  /** Where the last scan's object ended. */
  private end = 0;

  /**
   * Finds the members of a compact object starting at `start`; -1 if it is not one. Keys are
   * compared with the expected layout's as they come (each byte looked at once).
   */
  private scan(start: number, expected: KeyLayout | undefined): number {
    const b = this.work;
    let p = start;
    if (b[p] !== 0x7b) return -1;
    p++;
    let m = 0;
    this.matched = expected !== undefined;
    for (;;) {
      if (m === MAX_MEMBERS || b[p] !== QUOTE) return -1;
      this.keyStart[m] = p;
      const key = this.matched && m < expected!.keys.length ? expected!.keys[m]! : undefined;
      let k = 0;
      if (key) while (k < key.length && b[p + k] === key[k]) k++;
      if (key && k === key.length) p += k;
      else {
        this.matched = false;
        p = plainStringEnd(b, p + 1);
        if (p < 0) return -1;
      }
      if (b[p] !== 0x3a) return -1;
      this.keyEnd[m] = p;
      p++;
      const c = b[p]!;
      if (c === QUOTE) {
        p = plainStringEnd(b, p + 1);
        this.kind[m] = 0;
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        p = canonicalIntegerEnd(b, p);
        this.kind[m] = 1;
      } else {
        p = literalEnd(b, p);
        this.kind[m] = 2;
      }
      if (p < 0) return -1;
      this.valueEnd[m] = p;
      m++;
      if (b[p] === 0x2c) {
        p++;
        continue;
      }
      if (b[p] !== 0x7d) return -1;
      this.end = p + 1;
      return m;
    }
  }

  private layoutOf(members: number): KeyLayout {
    for (let i = 0; i < this.layouts.length; i++) {
      const layout = this.layouts[i]!;
      if (layout.keys.length !== members || !this.sameKeys(layout.keys)) continue;
      if (i > 0) this.layouts.unshift(...this.layouts.splice(i, 1));
      return layout;
    }
    const keys: Uint8Array[] = [];
    const names: string[] = [];
    for (let m = 0; m < members; m++) {
      const bytes = this.work.slice(this.keyStart[m]!, this.keyEnd[m]!);
      keys.push(bytes);
      names.push(String.fromCharCode(...bytes.subarray(1, bytes.length - 1)));
    }
    const seq = names.indexOf("seq");
    const leafHash = names.indexOf("leaf_hash");
    const redacted = names.indexOf("redacted");
    const distinct = new Set(names).size === members && seq >= 0 && leafHash >= 0;
    const layout: KeyLayout = {
      keys,
      kind: !distinct ? null : redacted < 0 ? "record" : members === 3 ? "redacted" : null,
      // The order canonicalize() gives: Array.prototype.sort's default, by UTF-16 code units,
      // which for ASCII keys is byte order.
      order: names
        .map((_, i) => i)
        .filter((i) => i !== leafHash)
        .sort((a, b) => (names[a]! < names[b]! ? -1 : 1)),
      seq,
      leafHash,
      redacted,
    };
    this.layouts.unshift(layout);
    if (this.layouts.length > LAYOUTS_KEPT) this.layouts.pop();
    return layout;
  }

  private sameKeys(keys: Uint8Array[]): boolean {
    const b = this.work;
    for (let m = 0; m < keys.length; m++) {
      const key = keys[m]!;
      const s = this.keyStart[m]!;
      if (this.keyEnd[m]! - s !== key.length) return false;
      for (let j = 0; j < key.length; j++) if (b[s + j] !== key[j]) return false;
    }
    return true;
  }
}

/**
 * After the opening quote: the position after the closing one, if no byte between is a control
 * character (the run's line feed after it ends every scan; backslashes and bytes above 0x7f
 * were ruled out before).
 */
function plainStringEnd(b: Uint8Array, p: number): number {
  for (;;) {
    const c = b[p]!;
    if (c <= QUOTE) {
      if (c === QUOTE) return p + 1;
      if (c < 0x20) return -1;
    }
    p++;
  }
}

/** An integer written as canonical JSON writes it (no "-0", no leading zero, exact as a double). */
function canonicalIntegerEnd(b: Uint8Array, p: number): number {
  const negative = b[p] === 0x2d;
  if (negative) p++;
  const first = p;
  while (b[p]! >= 0x30 && b[p]! <= 0x39) p++;
  const digits = p - first;
  if (digits === 0 || digits > 15) return -1;
  if (b[first] === 0x30 && (digits > 1 || negative)) return -1;
  return p;
}

const LITERALS = ["true", "false", "null"].map((l) => Uint8Array.from(l, (c) => c.charCodeAt(0)));

function literalEnd(b: Uint8Array, p: number): number {
  for (const lit of LITERALS) {
    let j = 0;
    while (j < lit.length && b[p + j] === lit[j]) j++;
    if (j === lit.length) return p + j;
  }
  return -1;
}
function integerAt(line: Uint8Array, p: number, end: number): number {
  const negative = line[p] === 0x2d;
  let v = 0;
  for (let i = negative ? p + 1 : p; i < end; i++) v = v * 10 + (line[i]! - 0x30);
  return negative ? -v : v;
}

/** Whether line[p, p + 44) is the padded standard base64 of the 32 bytes in `digest` (a latin1 string). */
function matchesBase64(digest: string, line: Uint8Array, p: number): boolean {
  let i = 0;
  for (; i + 3 <= 32; i += 3, p += 4) {
    const v = (digest.charCodeAt(i) << 16) | (digest.charCodeAt(i + 1) << 8) | digest.charCodeAt(i + 2);
    if (
      line[p] !== B64[v >>> 18] ||
      line[p + 1] !== B64[(v >>> 12) & 63] ||
      line[p + 2] !== B64[(v >>> 6) & 63] ||
      line[p + 3] !== B64[v & 63]
    )
      return false;
  }
  // 32 = 30 + 2: the last two bytes make three characters and one "=".
  const v = (digest.charCodeAt(30) << 16) | (digest.charCodeAt(31) << 8);
  return (
    line[p] === B64[v >>> 18] &&
    line[p + 1] === B64[(v >>> 12) & 63] &&
    line[p + 2] === B64[(v >>> 6) & 63] &&
    line[p + 3] === 0x3d
  );
}
