import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { deployAndWait } from "./agentsHelpers";
import { apiKey, call } from "./harness";
import { killAll, startSvcProcess, type SvcProcess } from "./svcProcesses";
import { startReceiver } from "./webhooksHelpers";

/**
 * Issue 20, item 5: many processes on one PostgreSQL, nothing shared but the database. Two web
 * processes (in-process worker off, 20 calls a minute per delegation and route) and two worker
 * processes (`npm run worker`): deploy on one web process, invoke on the other; an ingested event
 * triggers a run on a worker; a revocation on one web process is refused on the other at its next
 * call; each webhook delivery is made once; the rate limit holds across both web processes; a
 * kill -9 of a worker loses nothing. On SQLite (one process per database file) a worker process
 * refuses to start.
 */
const engine = process.env.SVC_TEST_ENGINE === "postgres" ? "postgresql" : "sqlite";
const onPostgres = engine === "postgresql" ? it : () => undefined;
const onSqlite = engine === "sqlite" ? it : () => undefined;

const processes: SvcProcess[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
afterAll(async () => {
  killAll(processes);
  await receiver?.close();
});

const FINAL = ["completed", "failed", "cancelled"];
// Each run holds its sandbox 200 ms: the 30 of the kill -9 below take seconds on two workers, so the
// kill lands while some wait (with 60 ms, at a load of 12, all 30 had finished before the kill).
const SLOW = `export default async (input) => { const t = Date.now(); while (Date.now() - t < 200) {} return { n: input.n }; }`;
const trigger = (type: string) => ({
  capabilities: [
    { id: "svc_api:agents:read", evidence: ["reads agents"] },
    { id: "event_trigger", evidence: ["started by events"] },
    { id: `event_trigger:${type}`, evidence: [`reacts to ${type}`] },
  ],
  on: [{ event: type, description: `on ${type}` }],
});

describe("many processes on one database", () => {
  onSqlite("a worker process refuses to start on SQLite: the web process's worker is the only one", async () => {
    await expect(startSvcProcess("worker", {}, processes)).rejects.toThrow(/exited \(1\)[\s\S]*needs PostgreSQL/);
  });

  onPostgres(
    "2 web and 2 worker processes: deploy, invoke, trigger, revoke, webhooks, rate limit, kill -9",
    { timeout: 120_000 },
    async () => {
      receiver = await startReceiver(() => 200);
      const shared = { SVC_OUTBOUND_ALLOW: receiver.hostPort, SVC_JOB_LEASE_MS: "2000" };
      const web = { ...shared, SVC_IN_PROCESS_WORKER: "0", SVC_RATE_LIMIT_PER_MINUTE: "20" };
      const [a, b, w1] = await Promise.all([
        startSvcProcess("web", web, processes),
        startSvcProcess("web", web, processes),
        startSvcProcess("worker", shared, processes),
        startSvcProcess("worker", shared, processes),
      ]);
      const [A, B] = [a!.url!, b!.url!];
      const root = await apiKey();
      const db = await database();

      // Deployed on A (its checks run on a worker), invoked on B, run by a worker.
      const agentId = await deployAndWait(A, root.token, "scale-out", SLOW, trigger("scale.happened"));
      const invoked = await call(B, "POST", `/v1/agents/${agentId}/invoke`, {
        token: root.token,
        body: { input: { n: -1 } },
      });
      expect(invoked.status, JSON.stringify(invoked.body)).toBe(202);

      // An event ingested on B starts a run, on a worker (neither web process runs one).
      const hook = await call(A, "POST", "/v1/webhooks", {
        token: root.token,
        body: { target_url: `${receiver.url}/hook`, event_types: ["scale.*"] },
      });
      expect(hook.status).toBe(201);
      const EVENTS = 10;
      const ingested: string[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const res = await call(B, "POST", "/v1/events/ingest", {
          token: root.token,
          body: { type: "scale.happened", payload: { i } },
        });
        expect(res.status).toBe(202);
        expect(res.body).toMatchObject({ matched_subscriptions: 2, queued_executions: 1 });
        ingested.push(res.body.event_id);
      }
      const ids = [invoked.body.id as string];
      await expect
        .poll(() => db.read.asyncExecution.count({ where: { agentId, status: "completed" } }), {
          timeout: 30_000,
          interval: 100,
        })
        .toBe(1 + EVENTS);

      // Each webhook delivery made once, whichever worker claimed it.
      await expect
        .poll(() => db.read.webhookDelivery.count({ where: { success: true, eventId: { in: ingested } } }), {
          timeout: 30_000,
          interval: 100,
        })
        .toBe(EVENTS);
      const deliveries = receiver.at("/hook");
      expect(deliveries).toHaveLength(EVENTS);
      expect(new Set(deliveries.map((d) => d.headers["webhook-id"])).size).toBe(EVENTS);

      // A revocation on A is refused on B at B's very next call.
      const doomed = await apiKey();
      expect((await call(B, "GET", "/v1/agents", { token: doomed.token })).status).toBe(200);
      const revoked = await call(A, "POST", `/v1/delegations/${doomed.delegationId}/revoke`, {
        token: root.token,
        body: {},
      });
      expect(revoked.status).toBe(201);
      const after = await call(B, "GET", "/v1/agents", { token: doomed.token });
      expect(after.status).toBe(401);

      // 20 a minute per delegation and route, whichever web process serves: 30 calls, 20 served.
      // The 30 must fall in one window: a round that crossed a minute's boundary (the processes share
      // this machine's clock) is done again with a new key, rather than waiting for a minute to start.
      let statuses: number[] = [];
      for (let round = 0; round < 3; round++) {
        const limited = await apiKey();
        const window = Math.floor(Date.now() / 60_000);
        statuses = [];
        for (let i = 0; i < 30; i++)
          statuses.push((await call(i % 2 ? A : B, "GET", "/v1/agents", { token: limited.token })).status);
        if (Math.floor(Date.now() / 60_000) === window) break;
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
      expect(statuses.slice(20)).toEqual(Array(10).fill(429));

      // kill -9 of a worker mid-load: every execution still completes once (its lease lapses, the other takes it).
      const load: string[] = [];
      for (let k = 0; k < 3; k++) {
        const key = await apiKey(); // 10 invocations a key: within each key's 20 a minute
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            call(k % 2 ? A : B, "POST", `/v1/agents/${agentId}/invoke`, {
              token: key.token,
              body: { input: { n: k * 10 + i } },
            }),
          ),
        );
        for (const r of answers) {
          expect(r.status, JSON.stringify(r.body)).toBe(202);
          load.push(r.body.id);
        }
      }
      ids.push(...load);
      await expect
        .poll(() => db.read.asyncExecution.count({ where: { id: { in: load }, status: { in: FINAL } } }), {
          timeout: 30_000,
          interval: 20,
        })
        .toBeGreaterThanOrEqual(3);
      process.kill(-w1!.child.pid!, "SIGKILL");
      expect(await w1!.exited).toBe("SIGKILL");
      const pending = await db.read.asyncExecution.count({ where: { id: { in: load }, status: { notIn: FINAL } } });
      expect(pending, "the kill came mid-way").toBeGreaterThan(0);
      await expect
        .poll(() => db.read.asyncExecution.count({ where: { id: { in: load }, status: "completed" } }), {
          timeout: 40_000,
          interval: 100,
        })
        .toBe(load.length);
      const rows = await db.read.asyncExecution.findMany({ where: { id: { in: load } } });
      expect(new Set(rows.map((r) => (r.resultJson as { n: number }).n)).size).toBe(load.length);
      const runs = await db.read.provenanceRecord.findMany({
        where: { resourceType: "execution", resourceId: { in: ids }, operation: `RUN /v1/agents/${agentId}` },
        select: { id: true },
      });
      expect(runs).toHaveLength(ids.length);
      expect(await db.read.job.count({ where: { kind: "execution.run" } })).toBe(0);
    },
  );
});
