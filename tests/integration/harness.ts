import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative, sep } from "node:path";
import { Readable } from "node:stream";
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { database } from "@/server/db/client";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { createApiKeyAsOperator } from "@/server/identity/createApiKey";
import { rootOrgDid } from "@/server/setup/bootstrap";

/**
 * Serves the app's own /v1 route files (app/v1/**\/route.ts, /.well-known, /livez) over real
 * HTTP on loopback, routed the way Next.js routes them: `[param]` folders are path parameters.
 * Tests make real HTTP calls against it.
 */
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response> | Response;
interface Route {
  pattern: RegExp;
  names: string[];
  file: string;
  module: Record<string, Handler>;
}

const appDir = join(process.cwd(), "app");

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? routeFiles(join(dir, e.name)) : e.name === "route.ts" ? [join(dir, e.name)] : []));
}

export async function loadRoutes(): Promise<Route[]> {
  const routes: Route[] = [];
  // The public API's route files (the console's own routes need Next.js and a session).
  for (const file of routeFiles(appDir).filter((f) => !relative(appDir, f).startsWith("api" + sep))) {
    const segments = relative(appDir, file).split(sep).slice(0, -1).filter((s) => !/^\(.*\)$/.test(s));
    const names: string[] = [];
    const pattern = new RegExp(
      "^/" +
        segments
          .map((s) => {
            const m = /^\[(.+)\]$/.exec(s);
            if (!m) return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
            names.push(m[1]!);
            return "([^/]+)";
          })
          .join("/") +
        "$",
    );
    routes.push({ pattern, names, file, module: (await import(file)) as Record<string, Handler> });
  }
  // Static segments win over parameters, as in Next.js.
  return routes.sort((a, b) => a.names.length - b.names.length);
}

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
  const routes = await loadRoutes();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const route = routes.find((r) => r.pattern.test(url.pathname));
    const handler = route?.module[req.method ?? "GET"];
    if (!route || !handler) {
      res.writeHead(route ? 405 : 404).end();
      return;
    }
    const m = route.pattern.exec(url.pathname)!;
    const params = Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    headers.set(CLIENT_ADDRESS_HEADER, req.socket.remoteAddress ?? "unknown");
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(url, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      ...(hasBody ? { duplex: "half" } : {}),
    } as RequestInit);
    const response = await handler(request, { params: Promise.resolve(params) });
    // A body the handler stopped reading (413) leaves the connection unusable: close it, as Next.js does.
    if (!req.complete) res.shouldKeepAlive = false;
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
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
export async function call<T = any>(base: string, method: string, path: string, opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}), ...opts.headers };
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
export async function apiKey(capabilities: string[] = ["svc_api:*"], orgDid?: string, durationSeconds = 3600): Promise<{ token: string; delegationId: string; orgDid: string }> {
  const db = await database();
  const key = await createApiKeyAsOperator(db, { orgDid: orgDid ?? (await rootOrgDid(db))!, capabilities, durationSeconds });
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

/** The number of provenance records in the ledger. */
export async function provenanceCount(): Promise<number> {
  const db = await database();
  return db.read.provenanceRecord.count();
}

/** The newest provenance record. */
export async function lastProvenance() {
  const db = await database();
  return db.read.provenanceRecord.findFirst({ orderBy: { seq: "desc" } });
}

/** A second organization (a tenant) with its own API key. */
export async function secondOrg(base: string, rootToken: string, name = "Tenant B") {
  const passport = await call(base, "POST", "/v1/passports", { token: rootToken, body: { type: "organization", name, public_key: ed25519Jwk() } });
  const org = await call(base, "POST", "/v1/cp/orgs", { token: rootToken, body: { org_did: passport.body.did, name } });
  if (org.status !== 201) throw new Error(`could not create org: ${JSON.stringify(org.body)}`);
  return apiKey(["svc_api:*"], passport.body.did);
}

/** Starts another process serving the same database (same DATA_DIR / DATABASE_URL). */
export async function startOtherProcess(): Promise<{ url: string; stop(): void }> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, ["--import", "tsx", join(process.cwd(), "tests/integration/otherProcess.ts")], { env: { ...process.env, NODE_ENV: "test" }, stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("http://"));
      if (line) resolve(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`other process exited with ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}
