import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "../config";
import { resetKeyRing } from "../keys/signingKeys";
import { signatureHeaders } from "./signatureHeaders";
import { decryptSecret, encryptSecret, newWebhookSecret } from "./webhookSecrets";

const dataDir = mkdtempSync(join(tmpdir(), "svc-signing-"));
const saved = { DATA_DIR: process.env.DATA_DIR, SVC_SECRET: process.env.SVC_SECRET };

beforeAll(() => {
  process.env.DATA_DIR = dataDir;
  delete process.env.SVC_SECRET;
  resetConfig();
  resetKeyRing();
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  resetKeyRing();
  rmSync(dataDir, { recursive: true, force: true });
});

const body = JSON.stringify({
  type: "execution.completed",
  timestamp: new Date().toISOString(),
  data: { id: "exe_1", status: "completed", note: "ünïcode" },
});

describe("webhook secrets", () => {
  it("are whsec_ and 32 random bytes", () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it("round-trip through encryption and refuse a tampered ciphertext, another context or another service secret", async () => {
    const secret = newWebhookSecret();
    const sealed = await encryptSecret(secret, "did:org:1/callback");
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(await encryptSecret(secret, "did:org:1/callback")).not.toBe(sealed);
    expect(await decryptSecret(sealed, "did:org:1/callback")).toBe(secret);

    const [v, iv, tag, ct] = sealed.split(".") as [string, string, string, string];
    const bytes = Buffer.from(ct, "base64url");
    bytes[0]! ^= 1;
    await expect(
      decryptSecret([v, iv, tag, bytes.toString("base64url")].join("."), "did:org:1/callback"),
    ).rejects.toThrow();
    await expect(decryptSecret(sealed, "did:org:2/callback")).rejects.toThrow();
    await expect(decryptSecret("garbage", "did:org:1/callback")).rejects.toThrow(/unreadable/);

    process.env.SVC_SECRET = "another service secret";
    resetKeyRing();
    try {
      await expect(decryptSecret(sealed, "did:org:1/callback")).rejects.toThrow();
    } finally {
      delete process.env.SVC_SECRET;
      resetKeyRing();
    }
    expect(await decryptSecret(sealed, "did:org:1/callback")).toBe(secret);
  });
});

describe("signatureHeaders", () => {
  it("is verified by the standardwebhooks package", () => {
    const secret = newWebhookSecret();
    const headers = signatureHeaders({ msgId: "msg_exe_1", timestamp: new Date(), body, secrets: [secret] });
    expect(headers["webhook-id"]).toBe("msg_exe_1");
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    // the same bytes given as a Buffer sign identically
    expect(
      signatureHeaders({
        msgId: "msg_exe_1",
        timestamp: new Date(Number(headers["webhook-timestamp"]) * 1000),
        body: Buffer.from(body),
        secrets: [secret],
      }),
    ).toEqual(headers);
  });

  it("carries one signature per secret during a rotation, each verifying alone", () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const headers = signatureHeaders({ msgId: "msg_2", timestamp: new Date(), body, secrets: [current, previous] });
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  it("does not verify a tampered body, id or timestamp", () => {
    const secret = newWebhookSecret();
    const headers = signatureHeaders({ msgId: "msg_3", timestamp: new Date(), body, secrets: [secret] });
    const wh = new Webhook(secret);
    expect(() => wh.verify(body.replace("completed", "failed"), headers)).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, { ...headers, "webhook-id": "msg_4" })).toThrow(WebhookVerificationError);
    expect(() =>
      wh.verify(body, { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 1) }),
    ).toThrow(WebhookVerificationError);
  });

  it("refuses to sign without a secret, with a malformed one or with a bad message id", () => {
    expect(() => signatureHeaders({ msgId: "msg", timestamp: new Date(), body, secrets: [] })).toThrow();
    expect(() => signatureHeaders({ msgId: "msg", timestamp: new Date(), body, secrets: ["not-a-secret"] })).toThrow(
      /whsec_/,
    );
    expect(() =>
      signatureHeaders({ msgId: "a b", timestamp: new Date(), body, secrets: [newWebhookSecret()] }),
    ).toThrow();
  });
});
