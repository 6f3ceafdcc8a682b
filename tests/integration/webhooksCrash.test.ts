import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetConfig } from "@/server/config";
import { database } from "@/server/db/client";
import { call, useTestServer } from "./harness";
import { killProcessGroups, startServingProcess } from "./processes";
import { startReceiver } from "./webhooksHelpers";

/**
 * kill -9 during 500 pending deliveries: the process delivering them is killed with its whole
 * process group mid-way; a new process on the same data makes every remaining delivery, none
 * lost. Delivery is at least once: an attempt in flight at the kill may be sent again, with the
 * same webhook-id, so a receiver deduplicating on it acts once per event.
 */
const ctx = useTestServer();
const children: ChildProcess[] = [];
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // A slow receiver, so that deliveries are still pending when the kill comes.
  receiver = await startReceiver(() => 200, 60);
  process.env.SVC_OUTBOUND_ALLOW = receiver.hostPort;
  resetConfig();
});
afterAll(async () => {
  killProcessGroups(children);
  await receiver.close();
});

const startProcess = () =>
  startServingProcess("workerProcess", {
    env: { SVC_JOB_LEASE_MS: "1000", SVC_WEBHOOK_RETRY_SCHEDULE: "0,0.2,0.5,1" },
    detached: true,
    name: "the worker process",
    children,
  });

const N = 500;

// Its bounds are hang guards, not timings: its work (500 deliveries, two process starts) took over 60 s on this 2-core
// machine at a load average of 22.
describe("kill -9 during webhook deliveries", () => {
  it("after a restart every delivery is made, none lost, each event under one webhook-id", async () => {
    const hook = await call(ctx.server.url, "POST", "/v1/webhooks", {
      token: ctx.root.token,
      body: { target_url: `${receiver.url}/crash`, event_types: ["crash.*"] },
    });
    expect(hook.status).toBe(201);
    const db = await database();
    const delivered = () =>
      db.read.webhookDelivery
        .groupBy({ by: ["eventId"], where: { subscriptionId: hook.body.id, success: true } })
        .then((g) => g.length);

    const first = await startProcess();
    const eventIds: string[] = [];
    // One event alone first: the new process's subscription index is built by its first match
    // (concurrent first matches on PostgreSQL can run before the build ends: reported to events).
    const warm = await call(first.url, "POST", "/v1/events/ingest", {
      token: ctx.root.token,
      body: { type: "crash.test", payload: { n: 0 } },
    });
    expect(warm.body.matched_subscriptions).toBe(1);
    eventIds.push(warm.body.event_id);
    for (let batch = 1; batch < N; batch += 25) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(25, N - batch) }, (_, i) =>
          call(first.url, "POST", "/v1/events/ingest", {
            token: ctx.root.token,
            body: { type: "crash.test", payload: { n: batch + i } },
          }),
        ),
      );
      for (const a of answers) {
        expect(a.status, JSON.stringify(a.body)).toBe(202);
        expect(a.body.matched_subscriptions).toBe(1);
        eventIds.push(a.body.event_id);
      }
    }
    await expect.poll(() => receiver.at("/crash").length, { timeout: 60_000, interval: 10 }).toBeGreaterThanOrEqual(20);
    process.kill(-first.child.pid!, "SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const before = await delivered();
    expect(before, "the kill came mid-way").toBeLessThan(N);

    const second = await startProcess();
    await expect.poll(delivered, { timeout: 120_000, interval: 100 }).toBe(N);
    second.child.kill("SIGTERM");
    await new Promise((r) => second.child.once("exit", r));

    const ids = new Set(receiver.at("/crash").map((r) => r.headers["webhook-id"]));
    expect(ids).toEqual(new Set(eventIds.map((e) => `msg_${e}_${hook.body.id}`)));
    expect(await db.read.job.count({ where: { kind: "webhook.deliver" } })).toBe(0);
  }, 240_000);
});
