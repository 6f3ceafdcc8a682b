import { createHmac } from "node:crypto";
import { webhookSecretKey } from "./webhookSecrets";

export interface SignatureHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The Standard Webhooks headers of one message: `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>`
 * per secret, space-separated, so during a rotation a receiver holding either the new or the old
 * secret verifies (the `standardwebhooks` package accepts any matching signature). `msgId` stays
 * the same on every retry of a message so receivers can deduplicate; `body` is signed byte for byte
 * and must be sent exactly as given.
 */
export function signatureHeaders(message: {
  msgId: string;
  timestamp: Date;
  body: string | Uint8Array;
  secrets: readonly string[];
}): SignatureHeaders {
  const { msgId, timestamp, body, secrets } = message;
  if (!msgId || /\s/.test(msgId)) throw new Error("a webhook message id is non-empty and without white space");
  if (secrets.length === 0) throw new Error("at least one signing secret is needed");
  const seconds = String(Math.floor(timestamp.getTime() / 1000));
  const signatures = secrets.map((secret) => {
    const hmac = createHmac("sha256", webhookSecretKey(secret));
    hmac.update(`${msgId}.${seconds}.`);
    hmac.update(body);
    return `v1,${hmac.digest("base64")}`;
  });
  return { "webhook-id": msgId, "webhook-timestamp": seconds, "webhook-signature": signatures.join(" ") };
}
