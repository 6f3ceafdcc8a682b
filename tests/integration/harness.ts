import { createServer, type Server } from "node:http";
import { integratePending } from "@/server/ledger/integrate";
import type { AddressInfo } from "node:net";
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, vi } from "vitest";
import { database } from "@/server/db/client";
import { handleV1, servesPath } from "@/server/http/router";
import { createApiKeyAsOperator } from "@/server/identity/createApiKey";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { startServingProcess } from "./processes";

/**
 * The test server: svc's own node:http transport for the public API (server/http/router.ts's
 * `handleV1`, the handler server/main.ts mounts), on loopback. Tests make real HTTP calls against
 * it; tests/integration/transports.test.ts checks that Next.js's catch-all answers the same.
 */

/** Starts a test server and a root API key for the file's tests (closed after them). */
export function useTestServer(): { server: TestServer; root: Awaited<ReturnType<typeof apiKey>> } {
  const ctx = {} as { server: TestServer; root: Awaited<ReturnType<typeof apiKey>> };
  beforeAll(async () => {
    ctx.server = await startTestServer();
    ctx.root = await apiKey();
  });
  afterAll(() => ctx.server.close());
  return ctx;
}

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  // Exactly what server/main.ts does for the API's paths.
  const server: Server = createServer((req, res) => {
    if (servesPath((req.url ?? "/").split("?")[0]!)) void handleV1(req, res);
    else res.writeHead(404).end();
  });
  // As server/main.ts: with Node's 5 s default, a loaded machine let the server close a kept-alive
  // connection just as the next call went out on it (fetch failed: ECONNRESET in a beforeAll).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface ApiResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A JSON call against the test server. */
export async function call<T = any>(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult<T>> {
  const headers: Record<string, string> = {
    ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}),
    ...opts.headers,
  };
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: leave the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** An API key of the root organization (or `orgDid`) with the given capabilities. */
export async function apiKey(
  capabilities: string[] = ["svc_api:*"],
  orgDid?: string,
  durationSeconds = 3600,
): Promise<{ token: string; delegationId: string; orgDid: string }> {
  const db = await database();
  const key = await createApiKeyAsOperator(db, {
    orgDid: orgDid ?? (await rootOrgDid(db))!,
    capabilities,
    durationSeconds,
  });
  return { token: key.token, delegationId: key.delegation_id, orgDid: key.org_did };
}

/** A fresh Ed25519 public JWK (the private half is discarded: svc never sees it). */
export function ed25519Jwk(): { kty: string; crv: string; x: string } {
  const { publicKey } = generateKeyPairSync("ed25519");
  return publicKey.export({ format: "jwk" }) as { kty: string; crv: string; x: string };
}

export function p256Jwk(): Record<string, string> {
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return publicKey.export({ format: "jwk" }) as Record<string, string>;
}

/** The number of provenance records in the ledger (once the integrator has given each its position). */
export async function provenanceCount(): Promise<number> {
  const db = await database();
  await integratePending(db);
  return db.read.provenanceRecord.count();
}

/** The newest provenance record. */
export async function lastProvenance() {
  const db = await database();
  await integratePending(db);
  return db.read.provenanceRecord.findFirst({ orderBy: { seq: "desc" } });
}

/** A second organization (a tenant) with its own API key. */
export async function secondOrg(base: string, rootToken: string, name = "Tenant B") {
  const passport = await call(base, "POST", "/v1/passports", {
    token: rootToken,
    body: { type: "organization", name, public_key: ed25519Jwk() },
  });
  const org = await call(base, "POST", "/v1/cp/orgs", { token: rootToken, body: { org_did: passport.body.did, name } });
  if (org.status !== 201) throw new Error(`could not create org: ${JSON.stringify(org.body)}`);
  return apiKey(["svc_api:*"], passport.body.did);
}

/** Polls `probe` every 50 ms until it gives a value, for at most `ms` (then throws, naming `what`). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts another process serving the same database (same DATA_DIR / DATABASE_URL). */
export async function startOtherProcess(): Promise<{ url: string; stop(): void }> {
  const { url, child } = await startServingProcess("otherProcess", { stderr: "inherit", name: "other process" });
  return { url, stop: () => child.kill("SIGTERM") };
}

let minutesAhead = 0;
/**
 * Pins the clock (Date only; timers run) 30 s into a minute no earlier call of the file used, a
 * few minutes ahead: refusals without a caller get a record of their own only as the first of
 * their kind in a minute (server/governance/anonymousRefusals.ts), so a test that looks for that
 * record starts a minute of its own. `vi.useRealTimers()` undoes it.
 */
export function inFreshMinute(): void {
  const real = vi.isFakeTimers() ? vi.getRealSystemTime() : Date.now();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(real - (real % 60_000) + (2 + ++minutesAhead) * 60_000 + 30_000);
}
