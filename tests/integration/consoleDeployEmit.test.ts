import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { bundleOf, manifestOf } from "./agentsHelpers";
import { call, useTestServer } from "./harness";

/**
 * Issue 14.12: the sandbox pool is the process's, and Next.js's copy of the server modules may be
 * the one that creates it (the console's deploy with `wait: true` loads the bundle there). Every
 * run after that must still offer `ctx.events.emit`: the bridge entries are the process's, filled
 * by the composition root, not by whichever copy happened to import events/tasks.ts.
 */
process.env.SVC_SANDBOX_THREADS = "1";

const ctx = useTestServer();
let worker: Worker;
beforeAll(async () => {
  // No pool yet: the console's copy below is the one that creates it.
  await shutdownSandbox();
  worker = startWorker({ log: () => undefined, tasks: [] });
});
afterAll(async () => {
  await worker.stop();
  await shutdownSandbox();
});

const EMIT = `export default async (input, ctx) => ({ emitted: await ctx.events.emit("console.copy.emitted", { n: 1 }) })`;

describe("a deploy through the console's copy of the modules", () => {
  it("creates the sandbox pool there, and a later run (this copy's worker) calls ctx.events.emit successfully", async () => {
    // Next.js's copy: a second instance of every server module, as its bundle is.
    vi.resetModules();
    const consoleCopy = await import("@/server/appRouter");
    const caller = consoleCopy.createCaller({
      authorization: `Bearer ${ctx.root.token}`,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
    });
    const manifest = manifestOf("console-emitter", {
      capabilities: [{ id: "svc_api:events:write", evidence: ["emits console.copy.emitted"] }],
    });
    const deployed = (await caller.agents.deploy({ manifest, ...bundleOf(EMIT), wait: true } as never)) as {
      data: { agentId: string };
    };
    const agentId = deployed.data.agentId;
    const db = await database();
    await expect
      .poll(async () => (await db.read.agent.findUniqueOrThrow({ where: { id: agentId } })).status, { timeout: 30_000 })
      .toBe("active");

    // Invoked through the /v1 fast path and run by the worker, both this copy's modules.
    const invoked = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, {
      token: ctx.root.token,
      body: {},
    });
    expect(invoked.status).toBe(202);
    const id = invoked.body.id as string;
    await expect
      .poll(async () => (await db.read.asyncExecution.findUniqueOrThrow({ where: { id } })).status, { timeout: 30_000 })
      .not.toMatch(/queued|processing/);
    const run = await db.read.asyncExecution.findUniqueOrThrow({ where: { id } });
    expect(run.errorJson).toBeNull();
    expect(run.status).toBe("completed");
    const emitted = (run.resultJson as { emitted: { event_id: string } }).emitted;
    expect(await db.read.event.findUnique({ where: { id: emitted.event_id } })).toMatchObject({
      type: "console.copy.emitted",
      ingestedVia: "emit",
    });
  });
});
