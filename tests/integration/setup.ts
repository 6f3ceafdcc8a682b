import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, inject } from "vitest";
import { composeServer } from "@/server/areas";
import { resetConfig } from "@/server/config";
import { closeChanges } from "@/server/db/changes";
import { closeDatabase } from "@/server/db/client";
import { resetKeyRing } from "@/server/keys/signingKeys";
import { bootstrap } from "@/server/setup/bootstrap";
import { openApiDocument } from "@/server/openapi/document";
import { createLogger, logSettings, replaceLogger } from "@/server/telemetry/log";
import { resetProcessWide } from "@/server/processWide";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { OpenApiResponseValidator, type ResponseViolation } from "./openapiResponses";
import { adminUrl, createTestDatabase, dropTestDatabase, sessionsOn } from "./postgres";

/** States that depend on nothing a file changes (the code, not the database) and cost to rebuild. */
const KEEP_ACROSS_FILES = new Set([
  "telemetry.tracing",
  "telemetry.log",
  "prompts.ajv",
  "db.sqliteTranslations",
  "ids.randomPool",
  "reasoning.aiSdk",
  "jsonSchema.meter",
]);

/**
 * Every integration test file gets a database of its own: a SQLite file, or a PostgreSQL database
 * on the server named by TEST_POSTGRES_URL, copied from the run's template, which the real
 * migrate code migrated once (tests/integration/globalSetup.ts). First-run set-up runs here, per
 * file, exactly as at a real start (its migrate finds nothing left to apply).
 */
// Under `isolate: false` (vitest.config.ts) the files of a worker share one module graph: what the
// previous file left in process-wide state (caches of its database's rows, registries, counters)
// is put back as a fresh process has it. In a fresh process there is nothing to reset.
resetProcessWide(KEEP_ACROSS_FILES);
// State of the worker's own, kept across its files (isolate: false).
const WORKER = Symbol.for("svc.test.worker");
const workerSlot = ((
  globalThis as typeof globalThis & { [WORKER]?: { nextDatabase?: Promise<{ name: string; url: string }> } }
)[WORKER] ??= {});
// And the environment as the worker started with it: a file's settings end with the file.
const ENV_BASELINE = Symbol.for("svc.test.envBaseline");
const envSlot = globalThis as typeof globalThis & { [ENV_BASELINE]?: Record<string, string | undefined> };
const baseline = (envSlot[ENV_BASELINE] ??= { ...process.env });
for (const key of Object.keys(process.env)) if (!(key in baseline)) delete process.env[key];
Object.assign(process.env, baseline);
const dataDir = mkdtempSync(join(tmpdir(), "svc-test-"));
process.env.DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
let pgName: string | undefined;
if (process.env.SVC_TEST_ENGINE === "postgres") {
  const created = await testDatabase();
  pgName = created.name;
  process.env.DATABASE_URL = created.url;
} else {
  const template = inject("sqliteTemplate");
  if (template) copyFileSync(template, join(dataDir, "svc.db"));
}
resetConfig();
resetKeyRing();
// A line per governed call would bury the test output: warnings and errors only, unless asked.
if (!process.env.SVC_LOG_LEVEL) replaceLogger(createLogger(logSettings({ ...process.env, SVC_LOG_LEVEL: "warn" })));
await bootstrap();
// What server/main.ts does at start: the registries filled from the composition root.
composeServer();

/**
 * Every answer a test receives from /v1 is checked against the OpenAPI document (status declared
 * for the operation, body matching its schema): a violation rejects the fetch that received it
 * and fails the test, even if the test caught that rejection.
 */
let validator: OpenApiResponseValidator | undefined;
const violations: ResponseViolation[] = [];
// The fetch this file wraps is the platform's, not the previous file's wrapper (isolate: false).
const REAL_FETCH = Symbol.for("svc.test.realFetch");
const fetchSlot = globalThis as typeof globalThis & { [REAL_FETCH]?: typeof fetch };
const realFetch = (fetchSlot[REAL_FETCH] ??= globalThis.fetch);
globalThis.fetch = async function validatingFetch(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const res = await realFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!url.pathname.startsWith("/v1/")) return res;
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  validator ??= new OpenApiResponseValidator(openApiDocument());
  if (!validator.route(method, url.pathname)) return res;
  const contentType = res.headers.get("content-type");
  const json = /^application\/([a-z0-9.+-]+\+)?json\b/i.test(contentType ?? "");
  const bodyText = json ? await res.clone().text() : undefined;
  let body: unknown;
  try {
    body = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    body = bodyText;
  }
  const found = validator.check({
    method,
    pathname: url.pathname,
    status: res.status,
    contentType,
    body,
    bodyText: json ? bodyText : "-",
  });
  if (found.length === 0) return res;
  violations.push(...found);
  throw new Error(`OpenAPI violation:\n${found.map((v) => v.message).join("\n")}`);
};

afterEach(() => {
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(`OpenAPI violation (answers that break the document):\n${found.map((v) => v.message).join("\n")}`);
});

afterAll(async () => {
  await shutdownSandbox();
  // The file's connections to its database end with it, as they do with a process: the change
  // notifications' LISTEN connection, then the pool.
  await closeChanges();
  await closeDatabase();
  if (pgName) {
    await expectNoSessions(pgName);
    dropLater(pgName);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * This file's PostgreSQL database, a copy of the run's template. CREATE DATABASE … TEMPLATE costs
 * 0.4-1 s here and DROP DATABASE up to as much again (a checkpoint): where a worker runs several
 * files (isolate: false, the default) the next file's copy is made while this file runs, and this
 * file's database is dropped after it without the next file waiting. What a worker leaves (its
 * last copy made ahead, a drop under way when it ended) globalSetup.ts drops by the run's prefix.
 */
async function testDatabase(): Promise<{ name: string; url: string }> {
  const template = inject("postgresTemplate");
  const prefix = inject("postgresPrefix");
  const make = () => createTestDatabase(template, prefix);
  const taken = workerSlot.nextDatabase ?? make();
  workerSlot.nextDatabase = undefined;
  const created = await taken;
  if (inject("sharedWorkers")) {
    const next = make();
    // Awaited by the next file, which sees a failure; a worker's last one is never awaited.
    next.catch(() => undefined);
    workerSlot.nextDatabase = next;
  }
  return created;
}

function dropLater(name: string): void {
  dropTestDatabase(name).catch((e: Error) =>
    console.warn(`could not drop ${name} (the run drops it at its end): ${e.message}`),
  );
}

/**
 * Fails the file if any session is still connected to its database once it has closed its own
 * (the drop's FORCE would end them silently): a pool or a LISTEN connection left open, a process
 * the file started and did not stop. A process sent SIGTERM drains first: up to 15 s to go.
 */
async function expectNoSessions(name: string): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const sessions = await sessionsOn(name);
    if (sessions.length === 0) return;
    if (Date.now() > until)
      throw new Error(`sessions still connected to ${name} after the file ended:\n${sessions.join("\n")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export { adminUrl };
