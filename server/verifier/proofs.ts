import { hashChildren } from "../provenance/record";

/**
 * Proof checking for outside auditors, following RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2
 * (consistency) step by step. It shares nothing with the code that builds the tree except the two
 * hash functions. Indexes are plain numbers (exact up to 2^53); shifts are divisions.
 */
const lsb = (n: number) => n % 2 === 1;
const shr = (n: number) => Math.floor(n / 2);

/** RFC 9162 §2.1.3.2: whether `leafHash` at `leafIndex` is in the tree of `treeSize` leaves with root `root`. */
export function verifyInclusion(
  leafIndex: number,
  treeSize: number,
  leafHash: Uint8Array,
  path: Uint8Array[],
  root: Uint8Array,
): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Uint8Array = leafHash;
  for (const p of path) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = hashChildren(p, r);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = shr(fn);
          sn = shr(sn);
        }
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = shr(fn);
    sn = shr(sn);
  }
  return sn === 0 && Buffer.compare(Buffer.from(r), Buffer.from(root)) === 0;
}

/** RFC 9162 §2.1.4.2: whether the tree of `second` leaves (root `secondHash`) extends the tree of `first` leaves (root `firstHash`). */
export function verifyConsistency(
  first: number,
  second: number,
  firstHash: Uint8Array,
  secondHash: Uint8Array,
  proof: Uint8Array[],
): boolean {
  if (first > second || first < 1) return false;
  if (first === second)
    return proof.length === 0 && Buffer.compare(Buffer.from(firstHash), Buffer.from(secondHash)) === 0;
  if (proof.length === 0) return false;
  const path = Number.isInteger(Math.log2(first)) ? [firstHash, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) {
    fn = shr(fn);
    sn = shr(sn);
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = shr(fn);
          sn = shr(sn);
        }
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = shr(fn);
    sn = shr(sn);
  }
  return (
    Buffer.compare(Buffer.from(fr), Buffer.from(firstHash)) === 0 &&
    Buffer.compare(Buffer.from(sr), Buffer.from(secondHash)) === 0 &&
    sn === 0
  );
}
