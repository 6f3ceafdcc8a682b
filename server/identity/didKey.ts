import { createPublicKey } from "node:crypto";
import { base58 } from "@scure/base";
import type { JWK } from "jose";
import { ValidationFailed } from "../errors";

/**
 * did:key for the two key types svc accepts (W3C did:key v0.7): Ed25519 (multicodec 0xed) and
 * P-256 (multicodec 0x1200, compressed point). Passports are registered from a public key only.
 */
const ED25519_PREFIX = Uint8Array.of(0xed, 0x01);
const P256_PREFIX = Uint8Array.of(0x80, 0x24);
const ED25519_SPKI = Buffer.from("302a300506032b6570032100", "hex");
const P256_COMPRESSED_SPKI = Buffer.from("3039301306072a8648ce3d020106082a8648ce3d030107032200", "hex");

const invalidKey = (message: string) =>
  ValidationFailed([{ field: "public_key", code: "INVALID_FORMAT", message }], message);

export interface PublicKeyJwk {
  kty: "OKP" | "EC";
  crv: "Ed25519" | "P-256";
  x: string;
  y?: string;
}

/** Checks a public JWK (a real point on its curve, no private part) and returns its canonical form. */
export function normalizePublicJwk(jwk: JWK): PublicKeyJwk {
  if ("d" in jwk)
    throw invalidKey(
      "The key carries a private part (`d`): send only the public key. The service never accepts a private key.",
    );
  let canonical: PublicKeyJwk;
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519" && typeof jwk.x === "string")
    canonical = { kty: "OKP", crv: "Ed25519", x: jwk.x };
  else if (jwk.kty === "EC" && jwk.crv === "P-256" && typeof jwk.x === "string" && typeof jwk.y === "string")
    canonical = { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y };
  else throw invalidKey("public_key must be an Ed25519 (kty OKP) or P-256 (kty EC) public JWK, or a did:key.");
  try {
    createPublicKey({ key: { ...canonical }, format: "jwk" });
  } catch {
    throw invalidKey("public_key is not a valid point on its curve.");
  }
  return canonical;
}

/** The did:key of a public JWK. */
export function didKeyFromJwk(jwk: PublicKeyJwk): string {
  if (jwk.kty === "OKP") {
    const raw = Buffer.from(jwk.x, "base64url");
    return `did:key:z${base58.encode(concat(ED25519_PREFIX, raw))}`;
  }
  const x = Buffer.from(jwk.x, "base64url");
  const y = Buffer.from(jwk.y!, "base64url");
  const compressed = concat(Uint8Array.of(y[y.length - 1]! & 1 ? 0x03 : 0x02), x);
  return `did:key:z${base58.encode(concat(P256_PREFIX, compressed))}`;
}

/** The public JWK of a did:key (or of its bare multibase `z…` key string). */
export function jwkFromDidKey(value: string): PublicKeyJwk {
  const multibase = value.startsWith("did:key:") ? value.slice("did:key:".length).split("#")[0]! : value;
  if (!multibase.startsWith("z")) throw invalidKey("A did:key must be base58btc multibase (starting with z).");
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(multibase.slice(1));
  } catch {
    throw invalidKey("The did:key is not valid base58btc.");
  }
  const body = Buffer.from(bytes.subarray(2));
  let der: Buffer;
  if (bytes[0] === ED25519_PREFIX[0] && bytes[1] === ED25519_PREFIX[1] && body.length === 32)
    der = Buffer.concat([ED25519_SPKI, body]);
  else if (bytes[0] === P256_PREFIX[0] && bytes[1] === P256_PREFIX[1] && body.length === 33)
    der = Buffer.concat([P256_COMPRESSED_SPKI, body]);
  else throw invalidKey("The did:key is neither an Ed25519 nor a P-256 key.");
  let jwk: JsonWebKey;
  try {
    jwk = createPublicKey({ key: der, format: "der", type: "spki" }).export({ format: "jwk" });
  } catch {
    throw invalidKey("The did:key does not hold a valid public key.");
  }
  return normalizePublicJwk(jwk as JWK);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
