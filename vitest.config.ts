import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));
const alias = { "@": root.replace(/\/$/, "") };

/**
 * Process-level tests run on SQLite only: they start, SIGTERM or kill -9 svc processes, or pack
 * and install the SDK, and what they check is svc's own recovery (leases, drain, restart), the
 * same code on either engine, whose database statements the other files test on both. On
 * PostgreSQL the kill does not touch the database server at all, so SQLite, whose database lives
 * in the killed process's files, is the harder case. The README test stays on both: its snippets
 * run `npx svc` against the configured database, and the README documents both engines.
 */
const sqliteOnly = [
  "tests/integration/drain.test.ts",
  "tests/integration/executionsCrash.test.ts",
  "tests/integration/webhooksCrash.test.ts",
  "tests/integration/sdkPackage.test.ts",
];

/**
 * Three projects: unit tests beside the code, and the integration suite run twice, once on
 * SQLite and once on PostgreSQL (tests/integration/setup.ts gives every test file its own database,
 * copied from a template globalSetup.ts migrates once per run).
 */
export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: ["server/**/*.test.ts", "scripts/**/*.test.ts"],
          environment: "node",
          // Vitest's 5 s default is a guard against hangs, not a bound on behaviour, and the sandbox
          // pool's tests (200 cold starts, 1 GB allocations) took 4.1-4.3 s on a quiet run here and
          // over 5 s under load: a loaded 2-core CI machine must not fail them on the guard.
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      ...(["sqlite", "postgres"] as const).map((engine) => ({
        resolve: { alias },
        test: {
          name: engine,
          include: ["tests/integration/**/*.test.ts"],
          exclude: engine === "postgres" ? [...configDefaults.exclude, ...sqliteOnly] : configDefaults.exclude,
          environment: "node" as const,
          globalSetup: ["tests/integration/globalSetup.ts"],
          setupFiles: ["tests/integration/setup.ts"],
          env: { SVC_TEST_ENGINE: engine, NODE_ENV: "test" as const },
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: "forks" as const,
          // On SQLite the files of a worker share one module graph (loading the server's modules cost
          // ~5 s of CPU per file): setup.ts puts process-wide state and the environment back as a
          // fresh process has them before each file. SVC_TEST_ISOLATE=1 isolates every file again;
          // SVC_TEST_ISOLATE=0 shares on PostgreSQL too.
          ...((engine === "sqlite" && process.env.SVC_TEST_ISOLATE !== "1") || process.env.SVC_TEST_ISOLATE === "0"
            ? { isolate: false }
            : {}),
          // Files share nothing on either engine: each has its own database (setup.ts), its servers
          // listen on port 0, and PostgreSQL's advisory locks and LISTEN channels are per database.
          // How many run at once is vitest's default (cores - 1: one on a 2-core machine) unless
          // SVC_TEST_WORKERS says: two at once on a machine at load 20 pushed the process-level
          // tests (kill -9, SDK install) past their 60 s guard.
          ...(process.env.SVC_TEST_WORKERS ? { maxWorkers: Number(process.env.SVC_TEST_WORKERS) } : {}),
        },
      })),
    ],
  },
});
