import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JWK } from "jose";
import {
  appendKey,
  keysDir,
  keysFromEnv,
  readOrCreateKeyFile,
  toSigningKey,
  writeExclusive,
  type SigningKey,
} from "./keyFile";
import { processWide } from "../processWide";

export type { SigningKey } from "./keyFile";

/**
 * The service's own Ed25519 token-signing keys. They sign delegation tokens; never ledger
 * checkpoints (the ledger has a key of its own, server/keys/ledgerKeys.ts) and never a passport's
 * key. Kept in DATA_DIR/keys/signing-keys.json (mode 0600) or given by SVC_SIGNING_KEYS (a JSON
 * array of private Ed25519 JWKs). Several keys may be held at once, each
 * with its `kid` (its RFC 7638 thumbprint): the newest signs, all verify, so keys can rotate.
 */
export interface KeyRing {
  current: SigningKey;
  byKid: Map<string, SigningKey>;
  all: SigningKey[];
  /** 32 bytes for HMACs the service checks itself (pagination cursors). */
  secret: Buffer;
}

const KEY_FILE = "signing-keys.json";

const held = processWide("keys.signingKeyRing", () => ({ ring: undefined as Promise<KeyRing> | undefined }));

export function keyRing(): Promise<KeyRing> {
  held.ring ??= loadKeyRing();
  return held.ring;
}

export function resetKeyRing(): void {
  held.ring = undefined;
}

function readOrCreateSecret(): Buffer {
  if (process.env.SVC_SECRET) return Buffer.from(process.env.SVC_SECRET, "utf8");
  const path = join(keysDir(), "secret");
  writeExclusive(path, randomBytes(32).toString("base64url"));
  return Buffer.from(readFileSync(path, "utf8").trim(), "utf8");
}

async function loadKeyRing(): Promise<KeyRing> {
  const entries = process.env.SVC_SIGNING_KEYS
    ? await keysFromEnv("SVC_SIGNING_KEYS")
    : await readOrCreateKeyFile(KEY_FILE);
  const all = await Promise.all(entries.map(toSigningKey));
  return {
    current: all[all.length - 1]!,
    byKid: new Map(all.map((k) => [k.kid, k])),
    all,
    secret: readOrCreateSecret(),
  };
}

/**
 * Adds a new token-signing key to the key file; it signs from the next start on, the old ones
 * still verify. The ledger's checkpoint key is a separate key (server/keys/ledgerKeys.ts) and
 * does not change.
 */
export async function rotateSigningKey(): Promise<string> {
  if (process.env.SVC_SIGNING_KEYS) throw new Error("Signing keys come from SVC_SIGNING_KEYS: rotate them there.");
  const entry = await appendKey(KEY_FILE);
  resetKeyRing();
  return entry.kid;
}

/** The public JSON Web Key Set served at /.well-known/jwks.json. */
export async function publicJwks(): Promise<{ keys: JWK[] }> {
  return { keys: (await keyRing()).all.map((k) => k.publicJwk) };
}
