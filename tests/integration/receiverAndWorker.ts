import { afterAll, beforeAll } from "vitest";
import { resetConfig } from "@/server/config";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { startWorker, type Worker } from "@/server/worker/worker";
import { startReceiver } from "./webhooksHelpers";

/**
 * For the file's tests: a loopback receiver answering 200, allowed as an outbound target, and a
 * worker; after them the worker stops, the sandbox shuts down, the receiver closes, then `after`.
 */
export function useReceiverAndWorker({ after }: { after?: () => Promise<void> } = {}): {
  receiver: Awaited<ReturnType<typeof startReceiver>>;
} {
  const ctx = {} as { receiver: Awaited<ReturnType<typeof startReceiver>> };
  let worker: Worker;
  beforeAll(async () => {
    ctx.receiver = await startReceiver(() => 200);
    process.env.SVC_OUTBOUND_ALLOW = ctx.receiver.hostPort;
    resetConfig();
    worker = startWorker({ log: () => undefined, tasks: [] });
  });
  afterAll(async () => {
    await worker.stop();
    await shutdownSandbox();
    await ctx.receiver.close();
    await after?.();
  });
  return ctx;
}
