import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `npx svc` runs the CLI compiled once (dist/cli/svc.mjs), not TypeScript through tsx at every
 * call, and rebuilds it when a source changed. CPU time, not wall time, is compared: the machine
 * running the suite may be loaded.
 */
const root = join(import.meta.dirname, "..");
const bin = join(root, "bin/svc.mjs");
const bundle = join(root, "dist/cli/svc.mjs");
const dataDir = mkdtempSync(join(tmpdir(), "svc-cli-"));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  NODE_ENV: "production",
};
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs bin/svc.mjs and returns its own CPU time in seconds (user + system, as the process measured it at exit). */
function cpuSeconds(args: string[], extraEnv: Record<string, string> = {}): number {
  const wrapper = `process.on("exit", () => { const u = process.cpuUsage(); require("node:fs").writeSync(2, "\\ncpu:" + (u.user + u.system) / 1e6 + "\\n"); }); process.argv.splice(1, 0, ${JSON.stringify(bin)}); import(${JSON.stringify(bin)});`;
  const r = spawnSync(process.execPath, ["-e", wrapper, "--", ...args], {
    env: { ...env, ...extraEnv },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return Number(/cpu:([\d.]+)/.exec(r.stderr)![1]);
}

describe("the svc command line", () => {
  it("runs the compiled bundle, at well under the CPU time of running the sources through tsx", () => {
    execFileSync(process.execPath, [bin, "keys", "create", "--init", "--token-only"], { env, stdio: "pipe" });
    const compiled = Math.min(...[1, 2].map(() => cpuSeconds(["keys", "create", "--token-only"])));
    const fromSource = Math.min(
      ...[1, 2].map(() => cpuSeconds(["keys", "create", "--token-only"], { SVC_CLI_FROM_SOURCE: "1" })),
    );
    console.log(`svc keys create: ${compiled.toFixed(2)} s CPU compiled, ${fromSource.toFixed(2)} s through tsx`);
    expect(compiled).toBeLessThan(fromSource * 0.85);
    // A ceiling, not the figure: CPU time grows with the machine's load (the suite runs beside this
    // test: 2.3–2.9 s was seen at load 5–25, most of it loading the bundle and Prisma's query
    // compiler). The claim the test makes is the ratio above.
    expect(compiled).toBeLessThan(3.5);
  }, 120_000);

  it("rebuilds the bundle when a source it was built from is newer", () => {
    execFileSync(process.execPath, [bin, "keys", "create", "--token-only"], { env, stdio: "pipe" });
    const before = statSync(bundle).mtimeMs;
    const source = join(root, "server/cli/args.ts");
    const { atime, mtime } = statSync(source);
    const later = new Date(before + 5_000);
    try {
      utimesSync(source, later, later);
      execFileSync(process.execPath, [bin, "keys", "create", "--token-only"], { env, stdio: "pipe" });
      expect(statSync(bundle).mtimeMs).toBeGreaterThan(before);
    } finally {
      utimesSync(source, atime, mtime);
    }
  }, 120_000);
});
