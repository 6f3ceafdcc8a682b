import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { database } from "../db/client";
import { IdempotencyKeyReused, ValidationFailed } from "../errors";
import type { Prepared } from "../governance/governCall";
import { keyRing } from "../keys/signingKeys";

/**
 * Idempotency-Key for POSTs: a repeat by the same credential with the same key and request
 * replays the stored first response; the same key with another request is 422; a concurrent
 * duplicate is 409 (as Stripe does). Keys are scoped to the credential (the delegation), so
 * nobody else can replay a response, and stored responses are encrypted (AES-256-GCM with a key
 * derived from the service secret): some of them carry a bearer token. Kept 24 hours.
 */
async function cipherKey(): Promise<Buffer> {
  return createHmac("sha256", (await keyRing()).secret)
    .update("svc idempotency responses")
    .digest();
}

async function seal(plain: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", await cipherKey(), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `v1.${iv.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}.${body.toString("base64url")}`;
}

async function open(sealed: string): Promise<string> {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("unreadable stored idempotent response");
  const decipher = createDecipheriv("aes-256-gcm", await cipherKey(), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}

export async function idempotency(
  scope: string,
  key: string,
  fingerprint: string,
  hash: string,
  onReplay: (body: string) => void,
): Promise<Prepared> {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw ValidationFailed([
      {
        field: "Idempotency-Key",
        code: "INVALID_FORMAT",
        message: "Idempotency-Key must be 1 to 255 visible ASCII characters.",
      },
    ]);
  }
  const db = await database();
  const previous = await db.read.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
  if (previous) {
    if (previous.requestHash !== fingerprint) {
      throw IdempotencyKeyReused();
    }
    onReplay(await open(previous.body));
    return { requestHash: hash, replay: { status: previous.status } };
  }
  return {
    requestHash: hash,
    beforeCommit: async (tx, value, status) => {
      await tx.idempotencyKey.create({
        data: { scope, key, requestHash: fingerprint, status, body: await seal(JSON.stringify(value)) },
      });
    },
  };
}

/**
 * The answer a call gave once work after its commit ran (a reasoning call's text, or its 502
 * when every model failed), in place of what was stored at commit: a replay then answers what
 * the first call answered, a failure with its status and problem body. Written before that first
 * answer leaves, so no retry can see the earlier one.
 */
export async function replaceStoredResponse(scope: string, key: string, status: number, body: string): Promise<void> {
  const db = await database();
  const sealed = await seal(body);
  await db.writeTx((tx) => tx.idempotencyKey.updateMany({ where: { scope, key }, data: { status, body: sealed } }));
}
