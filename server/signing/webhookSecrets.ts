import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { keyRing } from "../keys/signingKeys";
import { processWide } from "../processWide";

/**
 * Signing secrets of callbacks and webhooks, in the Standard Webhooks form (`whsec_` + base64 of
 * 32 random bytes). svc must sign with them, so it cannot store a hash: it stores them sealed with
 * AES-256-GCM under a key derived (HKDF-SHA256) from the service secret, and binds each
 * ciphertext to a context (say the organization and purpose) so a sealed secret copied into
 * another row does not open there.
 */
const PREFIX = "whsec_";

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString("base64");
}

/** The HMAC key of a `whsec_` secret; a malformed secret is a bug, not a caller's mistake. */
export function webhookSecretKey(secret: string): Buffer {
  const key = secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), "base64") : Buffer.alloc(0);
  if (key.length < 24) throw new Error("not a whsec_ webhook secret");
  return key;
}

const sealing = processWide("signing.sealingKey", () => ({
  current: undefined as { secret: Buffer; key: Buffer } | undefined,
}));

async function key(): Promise<Buffer> {
  const { secret } = await keyRing();
  if (sealing.current?.secret !== secret) {
    sealing.current = {
      secret,
      key: Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "svc webhook signing secrets v1", 32)),
    };
  }
  return sealing.current.key;
}

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts; `context` must be given again to open it. */
export async function encryptSecret(secret: string, context = ""): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", await key(), iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${body.toString("base64url")}`;
}

/** Throws if the ciphertext was altered, sealed under another service secret, or with another context. */
export async function decryptSecret(sealed: string, context = ""): Promise<string> {
  const [version, iv, tag, body, extra] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined || extra !== undefined)
    throw new Error("unreadable sealed secret");
  const decipher = createDecipheriv("aes-256-gcm", await key(), Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}
