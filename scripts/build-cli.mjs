// Compiles the command line (server/cli/main.ts and what it imports) into one ES module,
// dist/cli/svc.mjs (and its verify worker thread, dist/cli/verify-worker.mjs), so `npx svc` does not compile TypeScript through tsx at every call. The
// packages are bundled too (Node then parses one ES module instead of lexing every CommonJS
// package for its exports), except native addons and Prisma's query compilers (WASM, one per
// engine, loaded only for the engine in use). Migrations are found at ../../prisma/migrations from
// dist/cli exactly as from server/db.
// bin/svc.mjs calls `buildCli()` itself when the bundle is missing or older than a source it was
// built from (packages change only through npm, whose postinstall rebuilds it); `npm run build`
// and postinstall run it ahead of time.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const CLI_BUNDLE = join(root, "dist/cli/svc.mjs");
export const CLI_INPUTS = join(root, "dist/cli/inputs.json");

/** Builds the bundle (written atomically: concurrent calls never see half a file). */
export async function buildCli() {
  const { build } = await import("esbuild");
  const out = await build({
    absWorkingDir: root,
    // svc.mjs, and the worker thread `svc verify --export` hashes records on (verify-worker.mjs).
    entryPoints: { svc: "server/cli/main.ts", "verify-worker": "server/verifier/leafWorker.ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The AI SDK is imported dynamically on a model call (server/reasoning/callModel.ts), which the
    // CLI never makes: left to node_modules, it is neither parsed nor evaluated at start.
    external: ["better-sqlite3", "pg-native", "*.wasm-base64.mjs", "tsx", "esbuild", "ai", "@ai-sdk/*"],
    // Bundled CommonJS packages call require(); give the ES module one.
    banner: {
      js: 'import { createRequire as __svcCreateRequire } from "node:module"; const require = __svcCreateRequire(import.meta.url);',
    },
    write: false,
    metafile: true,
    outdir: join(root, "dist/cli"),
    outExtension: { ".js": ".mjs" },
    logLevel: "error",
  });
  mkdirSync(join(root, "dist/cli"), { recursive: true });
  const suffix = `.${process.pid}.${Date.now()}.tmp`;
  // The inputs first: a bundle newer than its input list is never taken for fresh with a stale list.
  writeFileSync(
    CLI_INPUTS + suffix,
    JSON.stringify(
      Object.keys(out.metafile.inputs)
        .filter((f) => !f.includes("node_modules/"))
        .map((f) => relative(root, join(root, f))),
    ),
  );
  renameSync(CLI_INPUTS + suffix, CLI_INPUTS);
  // The worker before the bundle, whose time is what freshness is judged by.
  const [worker, bundle] = ["verify-worker.mjs", "svc.mjs"].map((name) =>
    out.outputFiles.find((f) => f.path.endsWith(`/${name}`)),
  );
  const workerPath = join(root, "dist/cli/verify-worker.mjs");
  writeFileSync(workerPath + suffix, worker.contents);
  renameSync(workerPath + suffix, workerPath);
  writeFileSync(CLI_BUNDLE + suffix, bundle.contents);
  renameSync(CLI_BUNDLE + suffix, CLI_BUNDLE);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildCli();
