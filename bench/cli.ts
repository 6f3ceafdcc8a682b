import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { machineLoad } from "./lib/machine";

/**
 * cli: the CPU one `npx svc keys create` costs, run from the compiled bundle (dist/cli/svc.mjs)
 * and from the sources through tsx (SVC_CLI_FROM_SOURCE=1), the fewest of three each. CPU time,
 * not wall time: it moves less with the machine's load. The bundle was 2.3–2.9 s of CPU at load
 * 5–25 (most of it loading the bundle and Prisma's query compiler); the sources cost more.
 * scripts/cliBundle.test.ts checks that the bundle is what runs. `npm run bench -- cli`.
 */
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = join(root, "bin/svc.mjs");

export async function cli(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-cli-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    NODE_ENV: "production",
  };
  try {
    execFileSync(process.execPath, [bin, "keys", "create", "--init", "--token-only"], { env, stdio: "pipe" });
    const cpuSeconds = (extraEnv: Record<string, string> = {}) => {
      // The command's own CPU (user + system) as it measured it at exit.
      const wrapper = `process.on("exit", () => { const u = process.cpuUsage(); require("node:fs").writeSync(2, "\\ncpu:" + (u.user + u.system) / 1e6 + "\\n"); }); process.argv.splice(1, 0, ${JSON.stringify(bin)}); import(${JSON.stringify(bin)});`;
      const r = spawnSync(process.execPath, ["-e", wrapper, "--", "keys", "create", "--token-only"], {
        env: { ...env, ...extraEnv },
        encoding: "utf8",
        timeout: 120_000,
      });
      if (r.status !== 0) throw new Error(`svc keys create failed: ${r.stderr}`);
      return Number(/cpu:([\d.]+)/.exec(r.stderr)![1]);
    };
    const fewest = (extraEnv?: Record<string, string>) => Math.min(...[1, 2, 3].map(() => cpuSeconds(extraEnv)));
    const compiled = fewest();
    const fromSource = fewest({ SVC_CLI_FROM_SOURCE: "1" });
    console.log(
      `\ncli: svc keys create: ${compiled.toFixed(2)} s CPU compiled, ${fromSource.toFixed(2)} s through tsx (${((compiled / fromSource) * 100).toFixed(0)} %; ${machineLoad()})`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
