import { createHash, sign, type KeyObject } from "node:crypto";

/**
 * C2SP signed notes (https://c2sp.org/signed-note) and tlog-checkpoints
 * (https://c2sp.org/tlog-checkpoint), as svc signs them. A note is its text (lines ending in
 * "\n"), a blank line, and signature lines `— <key name> <base64(key hash ‖ signature)>`.
 */
export const ED25519_TYPE = 0x01;
export const COSIGNATURE_TYPE = 0x04;

/** The 4-byte key hash: SHA-256(name ‖ "\n" ‖ type ‖ public key)[:4]. */
export function keyHash(name: string, type: number, publicKey: Uint8Array): Buffer {
  return createHash("sha256")
    .update(name)
    .update("\n")
    .update(Uint8Array.of(type))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

/** The note verifier key: `<name>+<hex key hash>+<base64(type ‖ public key)>`. */
export function verifierKey(name: string, publicKey: Uint8Array, type = ED25519_TYPE): string {
  return `${name}+${keyHash(name, type, publicKey).toString("hex")}+${Buffer.concat([Uint8Array.of(type), publicKey]).toString("base64")}`;
}

/** The checkpoint body: origin, decimal tree size, base64 root hash, each on its line. */
export function checkpointBody(origin: string, treeSize: number, rootHash: Uint8Array): string {
  return `${origin}\n${treeSize}\n${Buffer.from(rootHash).toString("base64")}\n`;
}

/** Signs a note's text with an Ed25519 key whose note key name is `name`. */
export function signNote(text: string, name: string, privateKey: KeyObject, publicKey: Uint8Array): string {
  const signature = sign(null, Buffer.from(text, "utf8"), privateKey);
  return `${text}\n— ${name} ${Buffer.concat([keyHash(name, ED25519_TYPE, publicKey), signature]).toString("base64")}\n`;
}
