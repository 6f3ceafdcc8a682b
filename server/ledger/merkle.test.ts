import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashChildren, hashLeaf } from "../provenance/record";
import { verifyConsistency, verifyInclusion } from "../verifier/proofs";
import { consistencyRanges, inclusionRanges, nodeKey, nodesFor, rangeHash } from "./merkle";

/** RFC 9162 §2.1.1 MTH, written straight from the definition, as the reference. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return createHash("sha256").digest();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashChildren(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leaves = Array.from({ length: 70 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
/** Stored perfect nodes, as the builder would store them. */
const node = (level: number, index: number) => mth(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));

describe("the ledger's Merkle tree", () => {
  it("range hashes equal the RFC's MTH for every prefix", () => {
    for (let n = 1; n <= leaves.length; n++)
      expect(rangeHash(0, n, node).equals(mth(leaves.slice(0, n))), `n=${n}`).toBe(true);
  });

  it("inclusion proofs verify with the independent RFC 9162 verifier, for every leaf of every size, and fail when altered", () => {
    for (let n = 1; n <= 40; n++) {
      const root = mth(leaves.slice(0, n));
      for (let m = 0; m < n; m++) {
        const path = inclusionRanges(m, n).map(([s, e]) => rangeHash(s, e, node));
        expect(verifyInclusion(m, n, leaves[m]!, path, root), `m=${m} n=${n}`).toBe(true);
        if (path.length) expect(verifyInclusion(m, n, leaves[(m + 1) % n]!, path, root)).toBe(n === 1);
        expect(verifyInclusion(m, n, leaves[m]!, path, mth(leaves.slice(0, n + 1)))).toBe(false);
        expect(verifyInclusion(n, n, leaves[m]!, path, root)).toBe(false);
      }
    }
  });

  it("consistency proofs verify for every pair of sizes, and fail against a different tree", () => {
    for (let n = 1; n <= 40; n++) {
      for (let m = 1; m <= n; m++) {
        const path = consistencyRanges(m, n).map(([s, e]) => rangeHash(s, e, node));
        expect(verifyConsistency(m, n, mth(leaves.slice(0, m)), mth(leaves.slice(0, n)), path), `${m}→${n}`).toBe(true);
        if (m < n)
          expect(verifyConsistency(m, n, mth(leaves.slice(1, m + 1)), mth(leaves.slice(0, n)), path)).toBe(false);
      }
    }
  });

  it("a proof needs only O(log n) stored nodes", () => {
    const n = 1_000_000;
    const nodes = nodesFor(inclusionRanges(123_457, n));
    expect(nodes.length).toBeLessThanOrEqual(40);
    expect(new Set(nodes.map((x) => nodeKey(x.level, x.index))).size).toBe(nodes.length);
  });
});
