import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { call, useTestServer } from "./harness";
import { deployAndWait } from "./agentsHelpers";
import { expectLedgerVerifies } from "./ledgerVerify";
import { killProcessGroups, startServingProcess } from "./processes";

/**
 * kill -9 under load: 300 executions are queued on a process that is then killed with its whole
 * process group mid-way; a new process on the same data brings every one to a final state, none
 * lost and none run to a second outcome, and the ledger still verifies.
 */
const ctx = useTestServer();
const children: ChildProcess[] = [];
afterAll(async () => {
  killProcessGroups(children);
  await shutdownSandbox();
});

// Its own process group, so that the kill takes the process and everything it started.
const startProcess = () =>
  startServingProcess("workerProcess", {
    env: { SVC_SANDBOX_THREADS: "2", SVC_JOB_LEASE_MS: "1000" },
    detached: true,
    name: "the worker process",
    children,
  });

const FINAL = ["completed", "failed", "cancelled"];
const N = 300;

// Its bounds are hang guards, not timings: its work (300 runs, two process starts) took over 60 s on this 2-core
// machine at a load average of 22.
describe("kill -9 under load", () => {
  it("every execution reaches a final state after a restart, each with one outcome, and the ledger verifies", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "crash-load",
      `export default async (input) => { const t = Date.now(); while (Date.now() - t < 30) {} return { n: input.n }; }`,
    );
    const db = await database();
    const first = await startProcess();
    const ids: string[] = [];
    for (let batch = 0; batch < N; batch += 10) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call(first.url, "POST", `/v1/agents/${agentId}/invoke`, {
            token: ctx.root.token,
            body: { input: { n: batch + i } },
          }),
        ),
      );
      for (const a of answers) {
        expect(a.status).toBe(202);
        ids.push(a.body.id);
      }
    }
    await expect
      .poll(() => db.read.asyncExecution.count({ where: { id: { in: ids }, status: { in: FINAL } } }), {
        timeout: 60_000,
        interval: 20,
      })
      .toBeGreaterThanOrEqual(20);
    process.kill(-first.child.pid!, "SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    const pending = await db.read.asyncExecution.count({ where: { id: { in: ids }, status: { notIn: FINAL } } });
    expect(pending, "the kill came mid-way").toBeGreaterThan(0);

    const second = await startProcess();
    await expect
      .poll(() => db.read.asyncExecution.count({ where: { id: { in: ids }, status: { in: FINAL } } }), {
        timeout: 120_000,
        interval: 100,
      })
      .toBe(N);
    second.child.kill("SIGTERM");
    await new Promise((r) => second.child.once("exit", r));

    const rows = await db.read.asyncExecution.findMany({ where: { id: { in: ids } } });
    expect(rows).toHaveLength(N);
    expect(rows.filter((r) => r.status !== "completed").map((r) => [r.id, r.status, r.errorJson])).toEqual([]);
    expect(new Set(rows.map((r) => (r.resultJson as { n: number }).n)).size).toBe(N);
    // Exactly one run record per execution: a run whose outcome was lost in the kill left none.
    const records = await db.read.provenanceRecord.findMany({
      where: { resourceType: "execution", resourceId: { in: ids }, operation: `RUN /v1/agents/${agentId}` },
      select: { id: true, resourceId: true },
    });
    expect(records).toHaveLength(N);
    expect(new Set(records.map((r) => r.id))).toEqual(new Set(rows.map((r) => r.provenanceId)));
    expect(await db.read.job.count({ where: { kind: "execution.run" } })).toBe(0);

    await expectLedgerVerifies(ctx.server.url, ctx.root.token, "svc-crash-");
  }, 240_000);
});
