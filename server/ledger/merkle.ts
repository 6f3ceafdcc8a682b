import { hashChildren } from "../provenance/record";

/**
 * RFC 9162 Merkle tree arithmetic over stored perfect subtrees. A perfect subtree is named by
 * (level, index): it covers leaves [index·2^level, (index+1)·2^level). Every range the RFC's
 * recursions visit starts at a multiple of its largest power-of-two part, so any range hash is a
 * fold of perfect subtrees, which the tree builder stores once they are complete.
 *
 * Functions here are pure: they say which perfect nodes a root or proof needs (`plan…`), and
 * compute it from a map of those nodes (`compute…`), so the caller fetches them in one query.
 */
export type NodeKey = `${number}:${number}`;
export const nodeKey = (level: number, index: number): NodeKey => `${level}:${index}`;
export type NodeLookup = (level: number, index: number) => Buffer;

/** Largest power of two strictly smaller than n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPow2 = (n: number) => n > 0 && Number.isInteger(Math.log2(n));

/** The perfect subtrees that make up leaves [start, end), left to right. */
export function perfectParts(start: number, end: number): { level: number; index: number }[] {
  const parts: { level: number; index: number }[] = [];
  let s = start;
  while (s < end) {
    const size = end - s;
    const k = isPow2(size) ? size : splitPoint(size);
    const level = Math.log2(k);
    parts.push({ level, index: s / k });
    s += k;
  }
  return parts;
}

/** MTH of leaves [start, end): the right fold of its perfect parts. */
export function rangeHash(start: number, end: number, node: NodeLookup): Buffer {
  const parts = perfectParts(start, end);
  let acc = node(parts[parts.length - 1]!.level, parts[parts.length - 1]!.index);
  for (let i = parts.length - 2; i >= 0; i--) acc = hashChildren(node(parts[i]!.level, parts[i]!.index), acc);
  return acc;
}

type Range = [number, number];

/** RFC 9162 §2.1.3.1 PATH(m, D[start:end]) as the list of ranges whose hashes form the path. */
function pathRanges(m: number, start: number, end: number): Range[] {
  const n = end - start;
  if (n <= 1) return [];
  const k = splitPoint(n);
  return m < k
    ? [...pathRanges(m, start, start + k), [start + k, end]]
    : [...pathRanges(m - k, start + k, end), [start, start + k]];
}

/** RFC 9162 §2.1.4.1 SUBPROOF(m, D[start:end], b) as ranges. */
function subproofRanges(m: number, start: number, end: number, b: boolean): Range[] {
  const n = end - start;
  if (m === n) return b ? [] : [[start, end]];
  const k = splitPoint(n);
  return m <= k
    ? [...subproofRanges(m, start, start + k, b), [start + k, end]]
    : [...subproofRanges(m - k, start + k, end, false), [start, start + k]];
}

export const inclusionRanges = (leafIndex: number, treeSize: number): Range[] => pathRanges(leafIndex, 0, treeSize);
export const consistencyRanges = (fromSize: number, toSize: number): Range[] =>
  fromSize === 0 || fromSize === toSize ? [] : subproofRanges(fromSize, 0, toSize, true);

/** The perfect nodes that hashing these ranges needs. */
export function nodesFor(ranges: Range[]): { level: number; index: number }[] {
  const seen = new Map<NodeKey, { level: number; index: number }>();
  for (const [s, e] of ranges) for (const p of perfectParts(s, e)) seen.set(nodeKey(p.level, p.index), p);
  return [...seen.values()];
}
