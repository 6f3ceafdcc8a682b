import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));
const alias = { "@": root.replace(/\/$/, "") };

/**
 * Tests whose engine does not matter run once, on SQLite (the default engine, and the harder case
 * for what they check); the other files run on both. Single tests of a file that is otherwise
 * engine-dependent are limited in the file (`onSqliteOnly`), with the same reasoning there.
 * - Process-level tests: they start, SIGTERM or kill -9 svc processes, or pack and install the
 *   SDK, and what they check is svc's own recovery (leases, drain, restart), the same code on
 *   either engine, whose database statements the other files test on both. On PostgreSQL the kill
 *   does not touch the database server at all, so SQLite, whose database lives in the killed
 *   process's files, is the harder case.
 * - The README's snippets: they are what a user runs first, on the default engine (no
 *   DATABASE_URL). What they do on PostgreSQL is each tested there on its own: the CLI on a
 *   PostgreSQL database (cli.test.ts), `backup --pg-dump` (backup.test.ts), every operation's
 *   answers (openapiClient.test.ts).
 * - The console's copy of the modules creating the sandbox pool (consoleDeployEmit.test.ts):
 *   which copy of a module holds the pool, not the database.
 * Hostile input and the two transports stay on both: what a hostile caller sends reaches the
 * database on either engine, and the transports' answers include the engine's errors.
 */
const sqliteOnly = [
  "tests/integration/drain.test.ts",
  "tests/integration/executionsCrash.test.ts",
  "tests/integration/webhooksCrash.test.ts",
  "tests/integration/sdkPackage.test.ts",
  "tests/integration/readme.test.ts",
  "tests/integration/consoleDeployEmit.test.ts",
];

/**
 * Three projects: unit tests beside the code, and the integration suite run twice, once on
 * SQLite and once on PostgreSQL (tests/integration/setup.ts gives every test file its own database,
 * copied from a template globalSetup.ts migrates once per run).
 */
const shareModules = process.env.SVC_TEST_ISOLATE !== "1";
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
          // Hang guards, as the unit project's: at a load average of 22 on this 2-core machine,
          // tests that start processes or pack and install (backup with pg_dump, the kill -9 tests,
          // the SDK's install) took 55-60 s and more, so a 60 s guard failed them on the load.
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: "forks" as const,
          // The files of a worker share one module graph (loading the server's modules cost ~5 s of
          // CPU per file): setup.ts puts process-wide state and the environment back as a fresh
          // process has them before each file, and closes each file's database connections at its
          // end (failing the file if any is left). SVC_TEST_ISOLATE=1 isolates every file again.
          ...(shareModules ? { isolate: false } : {}),
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
