import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `npx svc` runs the CLI compiled once (dist/cli/svc.mjs), not TypeScript through tsx at every
 * call, and rebuilds it when a source changed. What it costs in CPU either way is measured by
 * `npm run bench -- cli` (a timing is not a test's claim on a loaded machine); this file checks
 * which code runs.
 */
const root = join(import.meta.dirname, "..");
const bin = join(root, "bin/svc.mjs");
const bundle = join(root, "dist/cli/svc.mjs");
const sourceEntry = join(root, "server/cli/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "svc-cli-"));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  NODE_ENV: "production",
};
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// A module hook (it runs on the loader's thread) that reports each module the command loads.
const reportLoads = `data:text/javascript,${encodeURIComponent(
  `import { writeSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  writeSync(2, "\\nloaded:" + r.url + "\\n");
  return r;
}`,
)}`;

/** Runs bin/svc.mjs and returns the files of the modules it loaded. */
function loadedFiles(args: string[], extraEnv: Record<string, string> = {}): Set<string> {
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(reportLoads)});`)}`,
      bin,
      ...args,
    ],
    { env: { ...env, ...extraEnv }, encoding: "utf8", timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return new Set([...r.stderr.matchAll(/^loaded:(file:.*)$/gm)].map((m) => fileURLToPath(m[1]!)));
}

describe("the svc command line", () => {
  it("runs the compiled bundle, not the sources through tsx", () => {
    execFileSync(process.execPath, [bin, "keys", "create", "--init", "--token-only"], { env, stdio: "pipe" });
    const compiled = loadedFiles(["keys", "create", "--token-only"]);
    expect(compiled.has(bundle)).toBe(true);
    expect(compiled.has(sourceEntry)).toBe(false);
    expect([...compiled].filter((f) => f.endsWith(".ts"))).toEqual([]);
    // The probe sees the other path when asked for it, so the absence above is not the probe's blindness.
    const fromSource = loadedFiles(["keys", "create", "--token-only"], { SVC_CLI_FROM_SOURCE: "1" });
    expect(fromSource.has(sourceEntry)).toBe(true);
    expect(fromSource.has(bundle)).toBe(false);
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
