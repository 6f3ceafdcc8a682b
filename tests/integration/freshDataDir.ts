// Started through processScripts.ts, with DATA_DIR naming a directory that does not exist yet: starts svc
// there as a first start does (under a permissive umask, so modes come from svc, not the shell),
// writes, and prints the modes of the database's files while it is open (SQLite removes -wal and
// -shm on close).
import { statSync } from "node:fs";
import { join } from "node:path";

process.umask(0o002);
const { bootstrap } = await import("../../server/setup/bootstrap");
const { closeDatabase, database } = await import("../../server/db/client");
await bootstrap();
const db = await database();
await db.writeTx((tx) =>
  tx.serviceState.upsert({
    where: { key: "mode_probe" },
    create: { key: "mode_probe", value: "1" },
    update: { value: "2" },
  }),
);
const dir = process.env.DATA_DIR!;
const mode = (p: string) => {
  try {
    return (statSync(p).mode & 0o777).toString(8);
  } catch {
    return null;
  }
};
const modes = Object.fromEntries(["", "svc.db", "svc.db-wal", "svc.db-shm"].map((f) => [f || ".", mode(join(dir, f))]));
process.stdout.write(`${JSON.stringify(modes)}\n`);
await closeDatabase();
