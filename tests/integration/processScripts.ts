import { rmSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

/**
 * The scripts the integration tests start as svc processes of their own (a second process on the
 * file's database, a worker to kill -9, a web process to drain). Under tsx each start compiled and
 * loaded the server's module graph from source: 5 s at a load of 12 on this 2-core machine, 8-14 s
 * at 15, and the suite starts a few dozen. globalSetup.ts compiles them once per run into one
 * bundle (as scripts/build-cli.mjs does the CLI, with the same externals), which starts in ~2 s at
 * that load. The code is the same modules; only how Node loads them differs. Without a bundle (a
 * file run outside this project's globalSetup) they run under tsx as before.
 */
export const PROCESS_SCRIPTS = {
  otherProcess: "tests/integration/otherProcess.ts",
  workerProcess: "tests/integration/workerProcess.ts",
  webProcess: "tests/integration/webProcess.ts",
  loggingProcess: "tests/integration/loggingProcess.ts",
  freshDataDir: "tests/integration/freshDataDir.ts",
  worker: "server/worker/main.ts",
} as const;
export type ProcessScript = keyof typeof PROCESS_SCRIPTS;

/** Node's arguments that run `script`: its bundle when globalSetup built one, else the source under tsx. */
export function nodeArgs(script: ProcessScript): string[] {
  const dir = inject("processBundle");
  return dir ? [join(dir, `${script}.mjs`)] : ["--import", "tsx", join(process.cwd(), PROCESS_SCRIPTS[script])];
}

/**
 * Bundles every script into `dir` (under the project root, so that the packages left external
 * resolve from node_modules). Returns the function that removes it.
 */
export async function bundleProcessScripts(root: string, dir: string): Promise<() => void> {
  const { build } = await import("esbuild");
  await build({
    absWorkingDir: root,
    entryPoints: PROCESS_SCRIPTS,
    bundle: true,
    // One copy of the shared modules, loaded by whichever script starts.
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    alias: { "@": root },
    // scripts/build-cli.mjs's, and vitest (harness.ts imports it; the processes never call it).
    external: ["better-sqlite3", "pg-native", "*.wasm-base64.mjs", "tsx", "esbuild", "ai", "@ai-sdk/*", "vitest"],
    banner: {
      js: 'import { createRequire as __svcCreateRequire } from "node:module"; const require = __svcCreateRequire(import.meta.url);',
    },
    outdir: dir,
    outExtension: { ".js": ".mjs" },
    logLevel: "error",
  });
  return () => rmSync(dir, { recursive: true, force: true });
}
