import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { composeServer } from "@/server/areas";
import { resetConfig } from "@/server/config";
import { closeDatabase } from "@/server/db/client";
import { resetKeyRing } from "@/server/keys/signingKeys";
import { bootstrap } from "@/server/setup/bootstrap";
import { adminUrl, createTestDatabase, dropTestDatabase } from "./postgres";

/**
 * Every integration test file gets a database of its own: a fresh SQLite file, or a fresh
 * PostgreSQL database on the server named by TEST_POSTGRES_URL. Migrations and first-run set-up
 * run exactly as at a real start.
 */
const dataDir = mkdtempSync(join(tmpdir(), "svc-test-"));
process.env.DATA_DIR = dataDir;
delete process.env.DATABASE_URL;
let pgName: string | undefined;
if (process.env.SVC_TEST_ENGINE === "postgres") {
  const created = await createTestDatabase();
  pgName = created.name;
  process.env.DATABASE_URL = created.url;
}
resetConfig();
resetKeyRing();
await bootstrap();
// What server/main.ts does at start: the registries filled from the composition root.
composeServer();

afterAll(async () => {
  await closeDatabase();
  if (pgName) await dropTestDatabase(pgName);
  rmSync(dataDir, { recursive: true, force: true });
});

export { adminUrl };
