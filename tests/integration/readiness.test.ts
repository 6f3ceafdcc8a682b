import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { beat, forgetBeat } from "@/server/jobs/heartbeat";
import { readiness } from "@/server/meta/health";

/**
 * Issue 20, item 4: /readyz beyond the database's outages (tests/integration/faults.test.ts):
 * a migration this build ships that is not applied, and an in-process worker that stopped ticking.
 * Draining is tested under load in drain.test.ts.
 */
async function ready(): Promise<{ status: number; reason?: string }> {
  const res = await readiness();
  return { status: res.status, reason: ((await res.json()) as { reason?: string }).reason };
}

describe("/readyz", () => {
  it("is 503 migrations_pending until every migration this build ships is applied", async () => {
    const db = await database();
    const [last] = await db.raw.query<{ id: string; migration_name: string }>(
      `SELECT "id", "migration_name" FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`,
    );
    await db.raw.execute(`UPDATE "_prisma_migrations" SET "finished_at" = NULL WHERE "id" = $1`, [last!.id]);
    expect(await ready()).toEqual({ status: 503, reason: "migrations_pending" });
    await db.raw.execute(`UPDATE "_prisma_migrations" SET "finished_at" = $2 WHERE "id" = $1`, [last!.id, new Date()]);
    expect(await ready()).toEqual({ status: 200, reason: undefined });
  });

  it("is 503 worker_stalled while an in-process worker has not ticked for 15 s, 200 once it ticks or stops", async () => {
    beat("wrk_stuck", Date.now() - 16_000);
    expect(await ready()).toEqual({ status: 503, reason: "worker_stalled" });
    beat("wrk_stuck");
    expect(await ready()).toEqual({ status: 200, reason: undefined });
    beat("wrk_stuck", Date.now() - 16_000);
    forgetBeat("wrk_stuck");
    expect(await ready()).toEqual({ status: 200, reason: undefined });
  });
});
