import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { keyRing } from "../keys/signingKeys";
import { processWide } from "../processWide";

/**
 * OAuth tokens of installations (and the PKCE verifiers and client secrets of the marketplace)
 * are sealed at rest with AES-256-GCM. The ciphertext names the key that sealed it:
 * `t1.<key id>.<iv>.<tag>.<ciphertext>` (base64url), and is bound to its row and purpose through
 * the AAD (`context`), so a sealed token copied into another installation does not open there.
 *
 * Keys: `SVC_ENCRYPTION_KEYS`, a comma-separated list of `<key id>:<base64 of 32 bytes>`. The
 * first key seals; every key listed opens. Without it, one key is derived from the service
 * secret (HKDF-SHA256 over SVC_SECRET, key id `derived`), and that derived key always stays able
 * to open, so setting SVC_ENCRYPTION_KEYS later loses nothing.
 *
 * Rotation: put the new key first and keep the old ones after it; tokens sealed under an old key
 * still open, and each is sealed again under the new key the next time it is refreshed. Remove
 * an old key only after every token has been refreshed since (the worker refreshes tokens
 * before they expire, so one token lifetime is enough for most providers).
 */
const FORMAT = "t1";
export const DERIVED_KEY_ID = "derived";

interface Keys {
  sealWith: { id: string; key: Buffer };
  open: Map<string, Buffer>;
}

const held = processWide("marketplace.sealingKeys", () => ({
  keys: undefined as { source: string; secret: Buffer; keys: Keys } | undefined,
}));

/** Parses SVC_ENCRYPTION_KEYS; a malformed value stops the caller with a message naming the entry. */
export function parseEncryptionKeys(raw: string): { id: string; key: Buffer }[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const colon = entry.indexOf(":");
      const id = colon > 0 ? entry.slice(0, colon) : "";
      const key = Buffer.from(entry.slice(colon + 1), "base64");
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(id) || key.length !== 32 || id === DERIVED_KEY_ID)
        throw new Error(
          `SVC_ENCRYPTION_KEYS entries are <key id>:<base64 of 32 bytes> (key id: letters, digits, _ or -, not "${DERIVED_KEY_ID}"); entry ${JSON.stringify(id || entry.slice(0, 8) + "…")} is not`,
        );
      return { id, key };
    });
}

async function keys(): Promise<Keys> {
  const source = process.env.SVC_ENCRYPTION_KEYS ?? "";
  const { secret } = await keyRing();
  if (held.keys?.source === source && held.keys.secret === secret) return held.keys.keys;
  const derived = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "svc marketplace tokens v1", 32));
  const configured = parseEncryptionKeys(source);
  const open = new Map<string, Buffer>([[DERIVED_KEY_ID, derived]]);
  for (const k of configured) open.set(k.id, k.key);
  const result: Keys = { sealWith: configured[0] ?? { id: DERIVED_KEY_ID, key: derived }, open };
  held.keys = { source, secret, keys: result };
  return result;
}

/** Seals `plaintext`; `context` (say `ins_…:access`) must be given again to open it. */
export async function seal(plaintext: string, context: string): Promise<string> {
  const { sealWith } = await keys();
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealWith.key, iv);
  cipher.setAAD(Buffer.from(`${FORMAT}.${sealWith.id}.${context}`, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [
    FORMAT,
    sealWith.id,
    iv.toString("base64url"),
    cipher.getAuthTag().toString("base64url"),
    body.toString("base64url"),
  ].join(".");
}

/** Opens a sealed value; throws if it was altered, sealed for another context, or under a key no longer configured. */
export async function unseal(sealed: string, context: string): Promise<string> {
  const [format, keyId, iv, tag, body, extra] = sealed.split(".");
  if (format !== FORMAT || !keyId || !iv || !tag || body === undefined || extra !== undefined)
    throw new Error("unreadable sealed value");
  const key = (await keys()).open.get(keyId);
  if (!key) throw new Error(`the key ${keyId} that sealed this value is not configured (SVC_ENCRYPTION_KEYS)`);
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(`${FORMAT}.${keyId}.${context}`, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}

/** The key id a sealed value names (the console and tests show which key sealed a token). */
export function sealedKeyId(sealed: string): string | undefined {
  return sealed.split(".")[1];
}
