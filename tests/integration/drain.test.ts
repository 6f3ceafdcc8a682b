import { afterAll, describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { deployAndWait } from "./agentsHelpers";
import { call, useTestServer } from "./harness";
import { killAll, startSvcProcess, type SvcProcess } from "./svcProcesses";

/**
 * Issue 20, item 4: SIGTERM under load. A web process with its in-process worker takes a steady
 * load of invocations and is sent SIGTERM: /readyz answers 503 while it drains, it exits 0 (within
 * SVC_DRAIN_TIMEOUT_MS, else it would exit 1), and after a restart every call it acknowledged
 * (202) has its execution, completed, and its provenance record. Answers other than 202 are only
 * allowed as refused connections once the listener has closed: never a 5xx.
 */
const ctx = useTestServer();
const processes: SvcProcess[] = [];
afterAll(async () => {
  killAll(processes);
  await shutdownSandbox();
});

const FINAL = ["completed", "failed", "cancelled"];
const CODE = `export default async (input) => { const t = Date.now(); while (Date.now() - t < 20) {} return { n: input.n }; }`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("SIGTERM drains", () => {
  it("under load: /readyz 503 while draining, exit 0, and every acknowledged call kept after a restart", async () => {
    // The delay covers the two probes below after the "draining" line: 1 s was passed before the second
    // at a load of 12 (ECONNREFUSED on /livez).
    const env = { SVC_DRAIN_DELAY_MS: "4000", SVC_JOB_LEASE_MS: "2000" };
    const web = await startSvcProcess("web", env, processes);
    expect((await fetch(`${web.url}/readyz`)).status).toBe(200);
    const agentId = await deployAndWait(web.url!, ctx.root.token, "drain-load", CODE);

    const acked: string[] = [];
    const otherAnswers: Array<{ status: number; body: unknown }> = [];
    let refusedConnections = 0;
    let stopped = false;
    let n = 0;
    // Four callers, each a call per ~100 ms: about what one process runs of these 20 ms agents. Unpaced,
    // they acknowledged calls for the whole drain delay faster than any worker runs them, and the
    // restart then ran a thousand of them (30 s of this file) to check what a hundred check as well.
    const loop = async () => {
      while (!stopped) {
        await sleep(100);
        const i = n++;
        try {
          const res = await call(web.url!, "POST", `/v1/agents/${agentId}/invoke`, {
            token: ctx.root.token,
            body: { input: { n: i } },
          });
          if (res.status === 202) acked.push(res.body.id);
          else otherAnswers.push({ status: res.status, body: res.body });
        } catch {
          // The listener has closed (or the connection closed after its last answer): not acknowledged.
          refusedConnections++;
          await sleep(20);
        }
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    while (acked.length < 20) await sleep(20);

    process.kill(web.child.pid!, "SIGTERM");
    // The signal is handled by the child's event loop, a moment after it is sent.
    while (!web.output().includes("SIGTERM: draining")) await sleep(10);
    const readyz = await fetch(`${web.url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({ status: "not_ready", reason: "draining" });
    expect(Number(readyz.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const livez = await fetch(`${web.url}/livez`);
    expect(livez.status, "still alive while draining").toBe(200);

    expect(await web.exited, web.output()).toBe(0);
    stopped = true;
    await Promise.all(loops);
    expect(otherAnswers).toEqual([]);
    expect(web.output()).toMatch(/drained in \d+ ms/);
    expect(refusedConnections, "the load ran past the listener's close").toBeGreaterThan(0);

    // A restart finishes whatever the drained process had not run (nothing was claimed by it any more).
    const again = await startSvcProcess("web", env, processes);
    const db = await database();
    await expect
      .poll(() => db.read.asyncExecution.count({ where: { id: { in: acked }, status: { in: FINAL } } }), {
        timeout: 30_000,
        interval: 100,
      })
      .toBe(acked.length);
    process.kill(again.child.pid!, "SIGTERM");
    expect(await again.exited, again.output()).toBe(0);

    const rows = await db.read.asyncExecution.findMany({ where: { id: { in: acked } } });
    expect(rows).toHaveLength(acked.length);
    expect(rows.filter((r) => r.status !== "completed").map((r) => [r.id, r.status, r.errorJson])).toEqual([]);
    // Each acknowledged call has its record (the invoke's, 202), and each run exactly one.
    const invokes = await db.read.provenanceRecord.findMany({
      where: { resourceType: "execution", resourceId: { in: acked }, status: 202 },
      select: { resourceId: true },
    });
    expect(new Set(invokes.map((r) => r.resourceId))).toEqual(new Set(acked));
    const runs = await db.read.provenanceRecord.findMany({
      where: { resourceType: "execution", resourceId: { in: acked }, operation: `RUN /v1/agents/${agentId}` },
      select: { id: true },
    });
    expect(new Set(runs.map((r) => r.id))).toEqual(new Set(rows.map((r) => r.provenanceId)));
    expect(runs).toHaveLength(acked.length);
    expect(await db.read.job.count({ where: { kind: "execution.run" } })).toBe(0);
  });
});
