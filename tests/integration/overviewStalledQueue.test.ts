import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { recordWorkerSeen, workerLastSeen } from "@/server/jobs/workerSeen";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { deployAndWait } from "./agentsHelpers";
import { consoleMember } from "./consoleMembers";
import { call, useTestServer } from "./harness";

/**
 * Issue 28, item 3: a web process started with SVC_IN_PROCESS_WORKER=0 and no worker anywhere
 * leaves invocations queued while /readyz answers ready. The overview says so: queued work and no
 * worker seen (never, or for over a minute); nothing once a worker is alive. No worker runs in
 * this file until the last step, as in that deployment.
 */
const ctx = useTestServer();
let worker: Worker | undefined;
afterAll(async () => {
  await worker?.stop();
  await shutdownSandbox();
});

const api = (method: string, path: string, body?: unknown) =>
  call(ctx.server.url, method, path, { token: ctx.root.token, body });

describe("the overview: queued work and no worker", () => {
  it("shows due work with no worker ever seen or seen long ago, nothing while one is alive, and a running worker records itself", async () => {
    const admin = (await consoleMember("admin")).caller;
    expect((await admin.overview.dashboard()).attention.stalled_queue).toBeNull();

    const agent = await deployAndWait(ctx.server.url, ctx.root.token, "stalled-queue", "export default async () => 1");
    const run = await api("POST", `/v1/agents/${agent}/invoke`, {});
    expect(run.status, JSON.stringify(run.body)).toBe(202);

    const never = (await admin.overview.dashboard()).attention.stalled_queue;
    expect(never).toMatchObject({ queued_executions: 1, worker_last_seen_at: null });
    expect(never!.due_jobs).toBeGreaterThanOrEqual(1);

    const db = await database();
    const longAgo = new Date(Date.now() - 10 * 60_000);
    await recordWorkerSeen(db, longAgo);
    expect((await admin.overview.dashboard()).attention.stalled_queue).toMatchObject({
      queued_executions: 1,
      worker_last_seen_at: longAgo.toISOString(),
    });

    // A worker seen just now (another process): the due job is about to run, nothing to say.
    const justNow = new Date();
    await recordWorkerSeen(db, justNow);
    expect((await admin.overview.dashboard()).attention.stalled_queue).toBeNull();
    // A record that lags behind another process's never moves the time back.
    await recordWorkerSeen(db, longAgo);
    expect(await workerLastSeen(db.read)).toEqual(justNow);

    // A real worker records itself at its first poll, then runs the execution.
    worker = startWorker({ log: () => undefined, tasks: [] });
    await expect
      .poll(async () => (await workerLastSeen(db.read))!.getTime() > justNow.getTime(), {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(true);
    await expect
      .poll(async () => (await api("GET", `/v1/executions/${run.body.id}`)).body.status, {
        timeout: 30_000,
        interval: 50,
      })
      .toBe("completed");
    expect((await admin.overview.dashboard()).attention.stalled_queue).toBeNull();
  }, 90_000);
});
