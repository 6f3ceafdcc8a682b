import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashChildren } from "../provenance/record";
import { CompactRange } from "./compactRange";

/** RFC 9162 §2.1.1 MTH, by its recursive definition (k: the largest power of two below n). */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashChildren(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const leaves = Array.from({ length: 70 }, (_, i) => createHash("sha256").update(String(i)).digest());

describe("CompactRange", () => {
  it("gives the RFC 9162 root of every tree size, leaf by leaf", () => {
    const range = new CompactRange();
    for (let n = 1; n <= leaves.length; n++) {
      range.push(leaves[n - 1]!);
      expect(range.root().equals(mth(leaves.slice(0, n))), `size ${n}`).toBe(true);
    }
  });

  it("joins ranges built from any start into the same tree", () => {
    for (let a = 1; a < 40; a++) {
      for (let b = a; b < 70; b += 5) {
        const whole = new CompactRange();
        for (const [from, to] of [
          [0, a],
          [a, b],
          [b, 70],
        ] as const) {
          if (from === to) continue;
          const piece = new CompactRange(from);
          for (let i = from; i < to; i++) piece.push(leaves[i]!);
          expect(piece.size).toBe(to - from);
          piece.heights.forEach((h, i) => whole.pushNode(h, piece.hashes[i]!));
        }
        expect(whole.size).toBe(70);
        expect(whole.root().equals(mth(leaves)), `pieces at ${a} and ${b}`).toBe(true);
      }
    }
  });

  it("hashes leaves of any length the RFC's way (a redacted line may claim one)", () => {
    const odd = [Buffer.from("abc"), leaves[1]!, Buffer.alloc(0)];
    const range = new CompactRange();
    odd.forEach((l) => range.push(l));
    expect(range.root().equals(mth(odd))).toBe(true);
  });
});
