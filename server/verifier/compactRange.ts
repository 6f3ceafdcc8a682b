import { hash } from "node:crypto";
import { hashChildren } from "../provenance/record";

/**
 * A compact range of the RFC 9162 tree: the roots of the perfect subtrees covering leaves
 * [start, start + size), each aligned (a subtree of height h starts at a multiple of 2^h), on a
 * stack. From start 0 it is the tree so far and gives its root. From another start it is a piece
 * of the tree: a worker thread builds one over its run of records, and the main thread, whose
 * range has reached exactly that start, absorbs it node by node (pushNode) instead of leaf by
 * leaf, so the interior hashes are computed on the workers too. Positions are plain numbers
 * (exact up to 2^53).
 */
export class CompactRange {
  readonly start: number;
  size = 0;
  readonly heights: number[] = [];
  readonly hashes: Uint8Array[] = [];

  constructor(start = 0) {
    this.start = start;
  }

  push(leaf: Uint8Array): void {
    this.pushNode(0, leaf);
  }

  /** Appends the root of a perfect subtree of `height` that starts where this range ends. */
  pushNode(height: number, node: Uint8Array): void {
    let h = height;
    let hash = node;
    let n = this.heights.length;
    let at = this.start + this.size; // where the node starts
    // Two neighbours of one height join when the left one starts on a boundary of the next height:
    // always true from start 0, and false at the left edge of a range that starts mid-subtree.
    while (n > 0 && this.heights[n - 1] === h && (at - 2 ** h) % 2 ** (h + 1) === 0) {
      hash = joinHashes(this.hashes[n - 1]!, hash);
      this.heights.pop();
      this.hashes.pop();
      at -= 2 ** h;
      n--;
      h++;
    }
    this.heights.push(h);
    this.hashes.push(hash);
    this.size += 2 ** height;
  }

  /** The root of the tree of `size` leaves (meaningful from start 0). */
  root(): Buffer {
    let acc = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) acc = joinHashes(this.hashes[i]!, acc);
    return Buffer.from(acc);
  }
}

const pair = Buffer.alloc(65, 1);

/**
 * RFC 9162 interior node: SHA-256(0x01 ‖ left ‖ right), as hashChildren computes it. Two 32-byte
 * hashes (every genuine node) are hashed in one shot from a reused buffer: on Node 20, creating a
 * Hash object costs more than hashing 65 bytes, and a digest returned as a latin1 string is
 * cheaper than one returned as a Buffer. A redacted line may claim a leaf hash of any length;
 * those go the general way.
 */
function joinHashes(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== 32 || right.length !== 32) return hashChildren(left, right);
  pair.set(left, 1);
  pair.set(right, 33);
  return Buffer.from(hash("sha256", pair, "binary"), "latin1");
}
