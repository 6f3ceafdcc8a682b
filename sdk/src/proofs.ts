import { createHash, createPublicKey, verify } from "node:crypto";
import canonicalize from "canonicalize";
import { SvcVerificationError } from "./errors.js";

/**
 * A record's inclusion in svc's ledger, checked the way an outside auditor does, from the record,
 * its proof (GET /v1/provenance/{id}/proof) and the ledger's verifier key
 * (GET /v1/provenance/verifier-key) alone: the SDK's own copy of server/verifier (C2SP signed-note
 * checkpoints, RFC 9162 §2.1.3.2 inclusion), importing nothing of the server's.
 * tests/integration/sdk.test.ts checks both agree on real proofs.
 */

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};
/** RFC 9162 §2.1.1: leaf hash SHA-256(0x00 ‖ bytes); interior SHA-256(0x01 ‖ left ‖ right). */
const hashLeaf = (bytes: Uint8Array) => sha256(Uint8Array.of(0), bytes);
const hashChildren = (left: Uint8Array, right: Uint8Array) => sha256(Uint8Array.of(1), left, right);

interface VerifierKey {
  name: string;
  keyHash: Buffer;
  type: number;
  publicKey: Buffer;
}

function parseVerifierKey(value: string): VerifierKey {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(value.trim());
  if (!m) throw new SvcVerificationError("not a note verifier key (<name>+<8 hex>+<base64 key>)");
  const raw = Buffer.from(m[3]!, "base64");
  const key = { name: m[1]!, keyHash: Buffer.from(m[2]!, "hex"), type: raw[0]!, publicKey: raw.subarray(1) };
  const expected = sha256(Buffer.from(`${key.name}\n`, "utf8"), raw).subarray(0, 4);
  if (!expected.equals(key.keyHash))
    throw new SvcVerificationError("the verifier key's key hash does not match its name and key");
  return key;
}

const ED25519_SPKI = Buffer.from("302a300506032b6570032100", "hex");

function verifyCheckpoint(note: string, keys: VerifierKey[]): { treeSize: number; rootHash: Buffer } {
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw new SvcVerificationError("the checkpoint is not a signed note");
  const text = note.slice(0, split + 1);
  const lines = text.split("\n").slice(0, -1);
  if (lines.length < 3 || !/^(0|[1-9][0-9]*)$/.test(lines[1]!))
    throw new SvcVerificationError("the checkpoint has no origin, tree size and root hash");
  const rootHash = Buffer.from(lines[2]!, "base64");
  if (rootHash.length !== 32) throw new SvcVerificationError("the checkpoint's root hash is not 32 bytes");
  const origin = lines[0]!;
  for (const line of note.slice(split + 2).split("\n")) {
    const m = /^— (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) continue;
    const blob = Buffer.from(m[2]!, "base64");
    for (const key of keys) {
      if (key.type !== 0x01 || key.name !== origin || m[1] !== key.name || !blob.subarray(0, 4).equals(key.keyHash))
        continue;
      const publicKey = createPublicKey({
        key: Buffer.concat([ED25519_SPKI, key.publicKey]),
        format: "der",
        type: "spki",
      });
      if (blob.length === 68 && verify(null, Buffer.from(text, "utf8"), publicKey, blob.subarray(4)))
        return { treeSize: Number(lines[1]), rootHash };
    }
  }
  throw new SvcVerificationError(`the checkpoint of ${JSON.stringify(origin)} carries no valid signature by the key`);
}

/** RFC 9162 §2.1.3.2. */
function verifyInclusion(index: number, size: number, leaf: Buffer, path: Buffer[], root: Buffer): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = hashChildren(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/** The proof of GET /v1/provenance/{id}/proof. */
export interface InclusionProof {
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  inclusion_path: string[];
  checkpoint: string;
}

/**
 * Checks that `record` (as GET /v1/provenance/{id} gives it) is in the ledger's signed tree:
 * its leaf hash recomputed from its content (RFC 8785 canonical JSON), the proof's path leading
 * to the checkpoint's root, the checkpoint signed by one of `verifierKeys`. Returns the tree size;
 * throws SvcVerificationError saying what failed.
 */
export function verifyRecordInclusion(
  record: Record<string, unknown>,
  proof: InclusionProof,
  verifierKeys: string | string[],
): { treeSize: number } {
  const keys = (Array.isArray(verifierKeys) ? verifierKeys : [verifierKeys]).map(parseVerifierKey);
  const cp = verifyCheckpoint(proof.checkpoint, keys);
  const { leaf_hash: claimed, ...content } = record;
  const leaf = hashLeaf(Buffer.from(canonicalize(content) ?? "", "utf8"));
  const id = String(record.id);
  if (typeof claimed === "string" && !leaf.equals(Buffer.from(claimed, "base64")))
    throw new SvcVerificationError(`record ${id}: its content does not match its leaf_hash`);
  if (!leaf.equals(Buffer.from(proof.leaf_hash, "base64")))
    throw new SvcVerificationError(`record ${id}: it is not the leaf the proof is about`);
  if (record.seq !== proof.leaf_index)
    throw new SvcVerificationError(`record ${id}: its seq is not the proof's leaf index ${proof.leaf_index}`);
  if (cp.treeSize !== proof.tree_size)
    throw new SvcVerificationError(`the proof is for tree size ${proof.tree_size}, its checkpoint for ${cp.treeSize}`);
  const path = proof.inclusion_path.map((p) => Buffer.from(p, "base64"));
  if (!verifyInclusion(proof.leaf_index, proof.tree_size, leaf, path, cp.rootHash))
    throw new SvcVerificationError(`record ${id}: the inclusion path does not lead to the checkpoint's root`);
  return { treeSize: cp.treeSize };
}
