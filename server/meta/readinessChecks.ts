import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Database } from "../db/client";
import { migrationsRoot } from "../db/migrate";
import { oldestBeatAgeMs } from "../jobs/heartbeat";
import { processWide } from "../processWide";
import { isDraining } from "./drain";

/** Why this process is not ready beyond the database's outages (server/meta/health.ts's `readiness`). */
export type NotReadyReason = "draining" | "migrations_pending" | "worker_stalled";

/** An in-process worker's claim loop ticks every second: this long without a tick, it is stuck. */
export const WORKER_STALE_MS = 15_000;

const checked = processWide("meta.migrationsApplied", () => ({ applied: false }));

/** Checks that need no database: draining, and the in-process worker's heartbeat. */
export function processNotReady(): NotReadyReason | undefined {
  if (isDraining()) return "draining";
  const age = oldestBeatAgeMs();
  if (age !== undefined && age > WORKER_STALE_MS) return "worker_stalled";
  return undefined;
}

/**
 * Whether every migration this build ships is applied: queried until it is true once (migrations
 * are never unapplied), so a ready process costs nothing here. A web process started beside an
 * older one that has not migrated yet stays out of rotation until the migration has run.
 */
export async function migrationsPending(db: Database): Promise<boolean> {
  if (checked.applied) return false;
  const shipped = readdirSync(join(migrationsRoot(), db.engine), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const rows = await db.raw.query<{ migration_name: string }>(
    `SELECT "migration_name" FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`,
  );
  const applied = new Set(rows.map((r) => r.migration_name));
  checked.applied = shipped.every((name) => applied.has(name));
  return !checked.applied;
}
