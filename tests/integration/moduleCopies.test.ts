import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { database } from "@/server/db/client";
import { takeToken } from "@/server/http/rateLimit";
import { subscriptionIndex } from "@/server/events/matcher";
import { bridgeEntries } from "@/server/sandbox/bridge";
import { jobKind } from "@/server/jobs/registry";
import { config } from "@/server/config";
import { keyRing } from "@/server/keys/signingKeys";
import { sandboxPool, shutdownSandbox } from "@/server/sandbox/pool";
import { localRuns } from "@/server/executions/localRuns";
import { registeredTasks } from "@/server/worker/registry";
import { isKnownCapability } from "@/server/identity/capabilityCatalogue";
import { dispatcherFor } from "@/server/events/dispatch";
import { newId } from "@/server/ids";
import { serverModules } from "./sourceFiles";

/**
 * Next.js bundles its own copy of the server modules beside the ones the server loads itself
 * (node:http fast path, worker, tests: tsx); the process must still hold one copy of each piece of
 * state (server/processWide.ts). `vi.resetModules()` and a fresh import give a second copy, as
 * Next.js's bundle is.
 */
async function secondCopy<T>(path: string): Promise<T> {
  vi.resetModules();
  return (await import(/* @vite-ignore */ path)) as T;
}

describe("a second copy of the database module", () => {
  it("runs its after-commit hooks after the transaction opened by the first copy commits", async () => {
    const db = await database();
    const copy = await secondCopy<typeof import("@/server/db/client")>("@/server/db/client");
    const order: string[] = [];
    await db.writeTx(async (tx) => {
      copy.afterCommit(tx, () => order.push("hook"));
      await new Promise((r) => setTimeout(r, 20));
      order.push("body done");
    });
    order.push("committed");
    expect(order).toEqual(["body done", "hook", "committed"]);
  });
});

describe("one copy of the server's state per process", () => {
  it("a second copy of each stateful module sees the first copy's state", async () => {
    const key = `test:${newId("k")}`;
    expect((await takeToken(key, 3)).allowed).toBe(true);
    expect((await takeToken(key, 3)).allowed).toBe(true);
    const rate = await secondCopy<typeof import("@/server/http/rateLimit")>("@/server/http/rateLimit");
    expect(await rate.takeToken(key, 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await rate.takeToken(key, 3)).allowed).toBe(false);

    expect(
      (await secondCopy<typeof import("@/server/events/matcher")>("@/server/events/matcher")).subscriptionIndex,
    ).toBe(subscriptionIndex);
    expect(
      (await secondCopy<typeof import("@/server/executions/localRuns")>("@/server/executions/localRuns")).localRuns,
    ).toBe(localRuns);
    expect((await secondCopy<typeof import("@/server/config")>("@/server/config")).config()).toBe(config());
    expect(
      await (await secondCopy<typeof import("@/server/keys/signingKeys")>("@/server/keys/signingKeys")).keyRing(),
    ).toBe(await keyRing());
    const pool = sandboxPool();
    expect((await secondCopy<typeof import("@/server/sandbox/pool")>("@/server/sandbox/pool")).sandboxPool()).toBe(
      pool,
    );
    await shutdownSandbox();

    // The registries the composition root filled (tests/integration/setup.ts, as server/main.ts does).
    const bridge = await secondCopy<typeof import("@/server/sandbox/bridge")>("@/server/sandbox/bridge");
    expect([...bridge.bridgeEntries().keys()]).toEqual([...bridgeEntries().keys()]);
    expect(bridge.bridgeEntries().has("events.emit")).toBe(true);
    const jobs = await secondCopy<typeof import("@/server/jobs/registry")>("@/server/jobs/registry");
    expect(jobs.jobKind("execution.run")).toBe(jobKind("execution.run"));
    expect(jobs.jobKind("webhook.deliver")).toBeDefined();
    const dispatch = await secondCopy<typeof import("@/server/events/dispatch")>("@/server/events/dispatch");
    expect(dispatch.dispatcherFor("agent_trigger")).toBe(dispatcherFor("agent_trigger"));
    expect(
      (await secondCopy<typeof import("@/server/worker/registry")>("@/server/worker/registry")).registeredTasks(),
    ).toEqual(registeredTasks());
    const catalogue = await secondCopy<typeof import("@/server/identity/capabilityCatalogue")>(
      "@/server/identity/capabilityCatalogue",
    );
    expect(catalogue.isKnownCapability("svc_api:prompts:read")).toBe(isKnownCapability("svc_api:prompts:read"));
    expect(catalogue.isKnownCapability("svc_api:prompts:read")).toBe(true);
    expect(catalogue.isKnownCapability("svc_api:no-such-area:read")).toBe(false);
    expect(catalogue.isKnownCapability("svc_api:workflows:read")).toBe(true);
  });

  it("composing a second copy of the root registers nothing twice", async () => {
    const root = await secondCopy<typeof import("@/server/areas")>("@/server/areas");
    expect(() => root.composeServer()).not.toThrow();
    expect(bridgeEntries().get("events.emit")).toBeDefined();
  });

  it("no module keeps state of its own: module-level state goes through processWide()", () => {
    const files = serverModules();
    // A top-level `let`, an empty collection, or an instance of a class: state one copy of the
    // module would keep for itself. `// not state: …` on the line above marks a deliberate exception.
    const STATE = [
      /^(export )?let /,
      /^(export )?const \w+(: [^=]+)? = new (Map|Set|WeakMap|WeakSet)\b[^(]*\(\s*\)/,
      /^(export )?const \w+(: [^=]+)? = (\[\]|\{\});/,
      /^(export )?const \w+ = new (?!(Map|Set|WeakMap|WeakSet|TextEncoder|TextDecoder|RegExp|URL|Error)\b)[A-Z]\w*\(/,
    ];
    const offenders: string[] = [];
    for (const file of files) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        if (STATE.some((re) => re.test(line)) && !/^\s*\/\/ not state:/.test(lines[i - 1] ?? ""))
          offenders.push(`${relative(process.cwd(), file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
