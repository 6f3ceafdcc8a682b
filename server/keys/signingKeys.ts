import { generateKeyPairSync, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK, type KeyObject } from "jose";
import { config } from "../config";

/**
 * The service's own Ed25519 signing keys. They sign delegation tokens and ledger checkpoints; they
 * are never a passport's key. Kept in DATA_DIR/keys/signing-keys.json (mode 0600) or given by
 * SVC_SIGNING_KEYS (a JSON array of private Ed25519 JWKs). Several keys may be held at once, each
 * with its `kid` (its RFC 7638 thumbprint): the newest signs, all verify, so keys can rotate.
 */
export interface SigningKey {
  kid: string;
  createdAt: string;
  privateJwk: JWK;
  publicJwk: JWK;
  privateKey: CryptoKey | KeyObject;
  publicKey: CryptoKey | KeyObject;
}

interface KeyFile {
  keys: { kid: string; created_at: string; private_jwk: JWK }[];
}

export interface KeyRing {
  current: SigningKey;
  byKid: Map<string, SigningKey>;
  all: SigningKey[];
  /** 32 bytes for HMACs the service checks itself (pagination cursors). */
  secret: Buffer;
}

let ring: Promise<KeyRing> | undefined;

export function keyRing(): Promise<KeyRing> {
  ring ??= loadKeyRing();
  return ring;
}

export function resetKeyRing(): void {
  ring = undefined;
}

function keysDir(): string {
  const dir = join(config().dataDir, "keys");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

async function newKeyEntry(): Promise<KeyFile["keys"][number]> {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" }) as JWK;
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  return { kid, created_at: new Date().toISOString(), private_jwk: { ...jwk, kid, alg: "EdDSA" } };
}

function writeExclusive(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: "wx", mode: 0o600 });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
}

async function readOrCreateKeyFile(): Promise<KeyFile> {
  const path = join(keysDir(), "signing-keys.json");
  // Two processes starting at once: exactly one creates the file; the other reads it.
  writeExclusive(path, JSON.stringify({ keys: [await newKeyEntry()] }, null, 2));
  chmodSync(path, 0o600);
  return JSON.parse(readFileSync(path, "utf8")) as KeyFile;
}

function readOrCreateSecret(): Buffer {
  if (process.env.SVC_SECRET) return Buffer.from(process.env.SVC_SECRET, "utf8");
  const path = join(keysDir(), "secret");
  writeExclusive(path, randomBytes(32).toString("base64url"));
  return Buffer.from(readFileSync(path, "utf8").trim(), "utf8");
}

async function toSigningKey(entry: KeyFile["keys"][number]): Promise<SigningKey> {
  const { d: _d, ...publicJwk } = entry.private_jwk;
  return {
    kid: entry.kid,
    createdAt: entry.created_at,
    privateJwk: entry.private_jwk,
    publicJwk: { ...publicJwk, kid: entry.kid, alg: "EdDSA", use: "sig" },
    privateKey: (await importJWK(entry.private_jwk, "EdDSA")) as CryptoKey | KeyObject,
    publicKey: (await importJWK(publicJwk, "EdDSA")) as CryptoKey | KeyObject,
  };
}

async function loadKeyRing(): Promise<KeyRing> {
  let entries: KeyFile["keys"];
  if (process.env.SVC_SIGNING_KEYS) {
    const jwks = JSON.parse(process.env.SVC_SIGNING_KEYS) as JWK[];
    if (!Array.isArray(jwks) || jwks.length === 0) throw new Error("SVC_SIGNING_KEYS must be a non-empty JSON array of private Ed25519 JWKs");
    entries = await Promise.all(
      jwks.map(async (jwk) => {
        if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d) throw new Error("SVC_SIGNING_KEYS holds a key that is not a private Ed25519 JWK");
        const kid = jwk.kid ?? (await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }));
        return { kid, created_at: new Date(0).toISOString(), private_jwk: { ...jwk, kid } };
      }),
    );
  } else {
    entries = (await readOrCreateKeyFile()).keys;
  }
  const all = await Promise.all(entries.map(toSigningKey));
  return { current: all[all.length - 1]!, byKid: new Map(all.map((k) => [k.kid, k])), all, secret: readOrCreateSecret() };
}

/** Adds a new signing key to the key file; it signs from the next start on, the old ones still verify. */
export async function rotateSigningKey(): Promise<string> {
  if (process.env.SVC_SIGNING_KEYS) throw new Error("Signing keys come from SVC_SIGNING_KEYS: rotate them there.");
  const path = join(keysDir(), "signing-keys.json");
  const file = await readOrCreateKeyFile();
  const entry = await newKeyEntry();
  file.keys.push(entry);
  writeFileSync(path, JSON.stringify(file, null, 2), { mode: 0o600 });
  resetKeyRing();
  return entry.kid;
}

/** The public JSON Web Key Set served at /.well-known/jwks.json. */
export async function publicJwks(): Promise<{ keys: JWK[] }> {
  return { keys: (await keyRing()).all.map((k) => k.publicJwk) };
}
