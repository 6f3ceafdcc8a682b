import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { resetConfig } from "@/server/config";
import { migrate } from "@/server/db/migrate";
import { dropTestDatabase, dropTestDatabases, testDatabaseName, testDatabaseUrl } from "./postgres";
import { bundleProcessScripts } from "./processScripts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The migrated SQLite file (sqlite project) each test file copies as its database. */
    sqliteTemplate?: string;
    /** The migrated PostgreSQL database (postgres project) each test file's database is created from. */
    postgresTemplate?: string;
    /** How this run's test databases are named (`<prefix>_<hex>`): what is left of them is dropped at its end. */
    postgresPrefix?: string;
    /** Whether a worker runs several files (vitest `isolate: false`): it creates the next file's database ahead. */
    sharedWorkers?: boolean;
    /** Where this run's svc process scripts are bundled (tests/integration/processScripts.ts). */
    processBundle?: string;
  }
}

/**
 * Migrating a database costs seconds and the suite has ~90 files: the project's migrations run
 * once per run, by the real migrate code (what `npm start` runs), into a template each file's
 * database is copied from (a file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL).
 * First-run set-up (keys, root organization) still runs per file, so files share nothing.
 * Migrating from empty stays tested: storage.test.ts migrates fresh databases on both engines.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const engine = project.config.env?.SVC_TEST_ENGINE;
  const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL };
  const dir = mkdtempSync(join(tmpdir(), "svc-template-"));
  // A directory of this run's own: the other engine's run bundles at the same time.
  const bundle = join(process.cwd(), "dist", `test-processes-${engine}-${process.pid}`);
  const bundled = bundleProcessScripts(process.cwd(), bundle);
  bundled.catch(() => undefined); // awaited below, unless the migration fails first
  let pgName: string | undefined;
  try {
    process.env.DATA_DIR = dir;
    if (engine === "postgres") {
      pgName = testDatabaseName("svc_tpl");
      process.env.DATABASE_URL = testDatabaseUrl(pgName);
    } else delete process.env.DATABASE_URL;
    resetConfig();
    await migrate();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetConfig();
  }
  const prefix = testDatabaseName("svc_test");
  if (pgName) {
    project.provide("postgresTemplate", pgName);
    project.provide("postgresPrefix", prefix);
  } else project.provide("sqliteTemplate", join(dir, "svc.db"));
  project.provide("sharedWorkers", project.config.isolate === false);
  const removeBundle = await bundled;
  project.provide("processBundle", bundle);
  return async () => {
    removeBundle();
    // A worker's last database created ahead, a drop still under way when its worker ended, the
    // database of a file whose worker crashed.
    if (pgName) await dropTestDatabases(prefix);
    if (pgName) await dropTestDatabase(pgName);
    rmSync(dir, { recursive: true, force: true });
  };
}
