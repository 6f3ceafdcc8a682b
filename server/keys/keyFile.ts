import { generateKeyPairSync } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, importJWK, type CryptoKey, type JWK, type KeyObject } from "jose";
import { config } from "../config";

/**
 * An ordered set of Ed25519 keys kept in a file of DATA_DIR/keys (mode 0600) or given by an
 * environment variable (a JSON array of private JWKs). The newest signs, all verify. The service's
 * token-signing keys and the ledger's checkpoint key are two such sets, rotated independently.
 */
export interface SigningKey {
  kid: string;
  createdAt: string;
  privateJwk: JWK;
  publicJwk: JWK;
  privateKey: CryptoKey | KeyObject;
  publicKey: CryptoKey | KeyObject;
}

export interface KeyEntry {
  kid: string;
  created_at: string;
  private_jwk: JWK;
}

interface KeyFileContent {
  keys: KeyEntry[];
}

export function keysDir(): string {
  const dir = join(config().dataDir, "keys");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export async function newKeyEntry(privateJwk?: JWK): Promise<KeyEntry> {
  const jwk = privateJwk ?? (generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }) as JWK);
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  return {
    kid,
    created_at: new Date().toISOString(),
    private_jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid, alg: "EdDSA" },
  };
}

export function writeExclusive(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: "wx", mode: 0o600 });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
}

export function keyFileExists(name: string): boolean {
  return existsSync(join(config().dataDir, "keys", name));
}

/** Reads DATA_DIR/keys/<name>, creating it with `first()` when absent (exactly one of concurrent starters creates it). */
export async function readOrCreateKeyFile(
  name: string,
  first: () => Promise<KeyEntry> = () => newKeyEntry(),
): Promise<KeyEntry[]> {
  const path = join(keysDir(), name);
  if (!existsSync(path)) writeExclusive(path, JSON.stringify({ keys: [await first()] }, null, 2));
  chmodSync(path, 0o600);
  return (JSON.parse(readFileSync(path, "utf8")) as KeyFileContent).keys;
}

/** Appends a new key to DATA_DIR/keys/<name>; it signs from the next start on. */
export async function appendKey(name: string): Promise<KeyEntry> {
  const keys = await readOrCreateKeyFile(name);
  const entry = await newKeyEntry();
  keys.push(entry);
  writeFileSync(join(keysDir(), name), JSON.stringify({ keys }, null, 2), { mode: 0o600 });
  return entry;
}

/** Parses a JSON array of private Ed25519 JWKs from the environment variable `variable`. */
export async function keysFromEnv(variable: string): Promise<KeyEntry[]> {
  const jwks = JSON.parse(process.env[variable]!) as JWK[];
  if (!Array.isArray(jwks) || jwks.length === 0)
    throw new Error(`${variable} must be a non-empty JSON array of private Ed25519 JWKs`);
  return Promise.all(
    jwks.map(async (jwk) => {
      if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d)
        throw new Error(`${variable} holds a key that is not a private Ed25519 JWK`);
      const kid = jwk.kid ?? (await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }));
      return { kid, created_at: new Date(0).toISOString(), private_jwk: { ...jwk, kid } };
    }),
  );
}

export async function toSigningKey(entry: KeyEntry): Promise<SigningKey> {
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
