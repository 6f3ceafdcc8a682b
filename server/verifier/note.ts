import { createHash, createPublicKey, verify } from "node:crypto";

/**
 * Parsing and checking of C2SP signed notes and tlog-checkpoints, as an outside verifier does it:
 * from the note text and a verifier key string alone.
 */
export interface VerifierKey {
  name: string;
  keyHash: Buffer;
  type: number;
  publicKey: Buffer;
}

export interface ParsedCheckpoint {
  origin: string;
  treeSize: number;
  rootHash: Buffer;
  /** The signed text (body lines, each ending in "\n"). */
  text: string;
  signatures: { name: string; keyHash: Buffer; signature: Buffer }[];
}

export function parseVerifierKey(value: string): VerifierKey {
  // The name holds no "+", the key hash is 8 hex digits; the base64 key may itself contain "+".
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(value.trim());
  if (!m) throw new Error("not a note verifier key (<name>+<8 hex>+<base64 key>)");
  const parts = [m[1]!, m[2]!, m[3]!];
  const raw = Buffer.from(parts[2]!, "base64");
  const key = { name: parts[0]!, keyHash: Buffer.from(parts[1]!, "hex"), type: raw[0]!, publicKey: raw.subarray(1) };
  const expected = createHash("sha256").update(key.name).update("\n").update(raw).digest().subarray(0, 4);
  if (!expected.equals(key.keyHash)) throw new Error("the verifier key's key hash does not match its name and key");
  return key;
}

const ED25519_SPKI = Buffer.from("302a300506032b6570032100", "hex");
export const ed25519Verify = (publicKey: Buffer, message: Buffer, signature: Buffer) =>
  verify(
    null,
    message,
    createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: "der", type: "spki" }),
    signature,
  );

export function parseCheckpoint(note: string): ParsedCheckpoint {
  const split = note.lastIndexOf("\n\n");
  if (split < 0) throw new Error("not a signed note: no blank line before the signatures");
  const text = note.slice(0, split + 1);
  const lines = text.split("\n").slice(0, -1);
  if (lines.length < 3) throw new Error("not a checkpoint: it needs an origin, a tree size and a root hash");
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1]!)) throw new Error("the checkpoint's tree size is not a decimal number");
  const rootHash = Buffer.from(lines[2]!, "base64");
  if (rootHash.length !== 32) throw new Error("the checkpoint's root hash is not 32 bytes of base64");
  const signatures = note
    .slice(split + 2)
    .split("\n")
    .filter((l) => l.length > 0)
    .map((line) => {
      const m = /^— (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
      if (!m) throw new Error(`malformed signature line: ${line}`);
      const blob = Buffer.from(m[2]!, "base64");
      return { name: m[1]!, keyHash: blob.subarray(0, 4), signature: blob.subarray(4) };
    });
  return { origin: lines[0]!, treeSize: Number(lines[1]), rootHash, text, signatures };
}

/**
 * Parses a checkpoint and checks that it carries a valid signature by one of `keys` (a ledger
 * whose key was rotated is verified with the old and the new key together); throws saying what
 * failed.
 */
export function verifyCheckpoint(note: string, keys: VerifierKey | VerifierKey[]): ParsedCheckpoint {
  const cp = parseCheckpoint(note);
  const given = Array.isArray(keys) ? keys : [keys];
  if (given.some((k) => k.type !== 0x01)) throw new Error("a verifier key is not an Ed25519 note key");
  const named = given.filter((k) => k.name === cp.origin);
  if (named.length === 0) {
    const names = [...new Set(given.map((k) => JSON.stringify(k.name)))].join(", ");
    throw new Error(`the checkpoint's origin ${JSON.stringify(cp.origin)} is not the key's name ${names}`);
  }
  let signed = false;
  for (const key of named) {
    for (const sig of cp.signatures.filter((s) => s.name === key.name && s.keyHash.equals(key.keyHash))) {
      signed = true;
      if (sig.signature.length === 64 && ed25519Verify(key.publicKey, Buffer.from(cp.text, "utf8"), sig.signature))
        return cp;
    }
  }
  if (!signed)
    throw new Error(
      `the checkpoint carries no signature by ${given.length === 1 ? "this key" : `any of the ${given.length} given keys`} (key hashes ${named.map((k) => k.keyHash.toString("hex")).join(", ")}; the note is signed by ${cp.signatures.map((s) => s.keyHash.toString("hex")).join(", ") || "nobody"})`,
    );
  throw new Error("the checkpoint's signature is not valid");
}
