import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { signatureHeaders } from "@/server/signing/signatureHeaders";
import { newWebhookSecret } from "@/server/signing/webhookSecrets";
import { SDK_GENERATED_DIR, sdkSources } from "@/sdk/scripts/generate";
import {
  createSvcClient,
  SvcProblemError,
  SvcVerificationError,
  verifyRecordInclusion,
  verifyWebhook,
  type Schema,
} from "@/sdk/src/index";
import { call, ed25519Jwk, useTestServer } from "./harness";

// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const describeNever = (..._args: unknown[]) => undefined;

const ctx = useTestServer();

const svc = () => createSvcClient({ baseUrl: ctx.server.url, token: ctx.root.token, retry: { baseDelayMs: 10 } });
const newPassport = (name: string) => ({ type: "agent" as const, name, public_key: ed25519Jwk() });

// The generated sources are compared with the OpenAPI document, which is the same on both engines:
// once, on SQLite.
(process.env.SVC_TEST_ENGINE === "postgres" ? describeNever : describe)("the SDK's generated sources", () => {
  it("are up to date with the document the service serves (npm run sdk:generate rewrites them)", async () => {
    const doc = (await call(ctx.server.url, "GET", "/v1/openapi.json")).body;
    const fresh = await sdkSources(doc);
    const dir = join(process.cwd(), SDK_GENERATED_DIR);
    if (process.env.UPDATE_SDK_TYPES) {
      mkdirSync(dir, { recursive: true });
      for (const [name, text] of Object.entries(fresh)) writeFileSync(join(dir, name), text);
    }
    expect(readdirSync(dir).sort()).toEqual(Object.keys(fresh).sort());
    for (const [name, text] of Object.entries(fresh)) {
      expect(
        readFileSync(join(dir, name), "utf8") === text,
        `${SDK_GENERATED_DIR}/${name} lags the OpenAPI document: run \`npm run sdk:generate\``,
      ).toBe(true);
    }
  });
});

describe("the SDK against the service", () => {
  it("makes typed calls by operation id and by path, and iterates every page", async () => {
    const client = svc();
    const created = await client.ops.createPassport({ body: newPassport("sdk one") });
    const passport: Schema<"Passport"> = await client.ops.getPassport({ path: { did: created.did } });
    expect(passport.name).toBe("sdk one");
    const byPath = await client.GET("/v1/passports/{did}", { path: { did: created.did } });
    expect(byPath.did).toBe(created.did);
    for (let i = 0; i < 4; i++) await client.POST("/v1/passports", { body: newPassport(`sdk page ${i}`) });
    const seen: string[] = [];
    for await (const p of client.paginate("listPassports", { query: { limit: 2, type: "agent" } })) seen.push(p.did);
    const all = await call(ctx.server.url, "GET", "/v1/passports?limit=100&type=agent", { token: ctx.root.token });
    expect(all.body.pagination.has_more).toBe(false);
    expect(seen.sort()).toEqual(all.body.data.map((p: { did: string }) => p.did).sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(5);
  });

  it("throws problem+json answers as SvcProblemError with their fields", async () => {
    const client = svc();
    const missing = await client.ops.getPassport({ path: { did: "did:key:z6MkNotThere" } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SvcProblemError);
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
    const invalid = (await client.ops
      .listPassports({ query: { limit: 1000 } })
      .catch((e: unknown) => e)) as SvcProblemError;
    expect(invalid).toBeInstanceOf(SvcProblemError);
    expect(invalid.status).toBe(400);
    expect(invalid.code).toBe("validation_failed");
    expect(invalid.type).toMatch(/#validation_failed$/);
    expect(invalid.title).toBeTruthy();
    expect(invalid.errors[0]).toMatchObject({ field: "limit", code: "OUT_OF_RANGE" });
    expect(invalid.requestId).toMatch(/^req_/);
    const anonymous = createSvcClient({ baseUrl: ctx.server.url });
    await expect(anonymous.ops.listPassports()).rejects.toMatchObject({ status: 401, code: "unauthenticated" });
  });

  it("retries a write whose answer was lost with the same Idempotency-Key: it is made once", async () => {
    // A proxy that passes the first POST to the service and then drops the connection instead of
    // answering, and answers the second attempt's first try with 503 + Retry-After.
    const keys: string[] = [];
    let posts = 0;
    const target = new URL(ctx.server.url);
    const proxy: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        if (req.method === "POST") {
          posts++;
          keys.push(String(req.headers["idempotency-key"]));
          if (posts === 2) {
            res.writeHead(503, { "content-type": "application/problem+json", "retry-after": "0" });
            res.end(
              JSON.stringify({
                type: "https://svc.example.com/docs/errors#database_unavailable",
                title: "Database unavailable",
                status: 503,
                detail: "The database does not answer.",
                instance: "/v1/passports",
                request_id: "req_proxy",
              }),
            );
            return;
          }
        }
        const forward = httpRequest(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            let out = "";
            answer.on("data", (c) => (out += c));
            answer.on("end", () => {
              if (req.method === "POST" && posts === 1) return void req.socket.destroy();
              res.writeHead(answer.statusCode!, answer.headers).end(out);
            });
          },
        );
        forward.end(body);
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const client = createSvcClient({
        baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        token: ctx.root.token,
        retry: { retries: 3, baseDelayMs: 10 },
      });
      const body = newPassport("made once");
      const created = await client.ops.createPassport({ body });
      expect(posts).toBe(3);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      const db = await database();
      expect(await db.read.passport.count({ where: { name: "made once" } })).toBe(1);
      expect(created.name).toBe("made once");
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it("verifies a webhook delivery signed as svc signs it, and refuses a tampered or stale one", () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: "invoice.paid", data: { amount: 7 } });
    const headers = signatureHeaders({ msgId: "msg_1", timestamp: new Date(), body, secrets: [secret] });
    expect(verifyWebhook<{ type: string }>(secret, headers, body).payload.type).toBe("invoice.paid");
    // The standardwebhooks package agrees on the same message.
    expect(new Webhook(secret).verify(body, headers as unknown as Record<string, string>)).toMatchObject({
      type: "invoice.paid",
    });
    expect(verifyWebhook([newWebhookSecret(), secret], new Headers({ ...headers }), Buffer.from(body)).id).toBe(
      "msg_1",
    );
    expect(() => verifyWebhook(secret, headers, body.replace("7", "8"))).toThrow(SvcVerificationError);
    expect(() => verifyWebhook(newWebhookSecret(), headers, body)).toThrow(SvcVerificationError);
    const old = signatureHeaders({
      msgId: "msg_2",
      timestamp: new Date(Date.now() - 3_600_000),
      body,
      secrets: [secret],
    });
    expect(() => verifyWebhook(secret, old, body)).toThrow(/away from now/);
  });

  it("verifies a record's inclusion proof as the server's verifier does, and refuses an altered record", async () => {
    const client = svc();
    await client.ops.createPassport({ body: newPassport("proved") });
    await catchUp(await database());
    const [first] = (await client.ops.listProvenance({ query: { limit: 1 } })).data;
    const record = await client.ops.getProvenance({ path: { id: first!.id } });
    const proof = await client.ops.getProvenanceProof({ path: { id: first!.id } });
    const key = await client.ops.getProvenanceVerifierKey();
    expect(verifyRecordInclusion(record, proof, key).treeSize).toBe(proof.tree_size);
    expect(() => verifyRecordInclusion({ ...record, operation: "forged" }, proof, key)).toThrow(SvcVerificationError);
    const otherKey = "svc.ledger/other+00000000+AQ==";
    expect(() => verifyRecordInclusion(record, proof, otherKey)).toThrow(SvcVerificationError);
  });
});
