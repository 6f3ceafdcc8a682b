import { describe, expect, it, vi } from "vitest";
import { database } from "@/server/db/client";

/**
 * Next.js bundles its own copy of the server modules beside the ones the server loads itself; the
 * process still has one database. A write transaction opened through one copy must run the
 * after-commit hooks another copy registers after it commits, never before (a wake-up run before
 * commit let a job claim collide with the open transaction: SQLite "database is locked").
 */
describe("a second copy of the database module", () => {
  it("runs its after-commit hooks after the transaction opened by the first copy commits", async () => {
    const db = await database();
    vi.resetModules();
    const copy = await import("@/server/db/client");
    const order: string[] = [];
    await db.writeTx(async (tx) => {
      copy.afterCommit(tx, () => order.push("hook"));
      await new Promise((r) => setTimeout(r, 20));
      order.push("body done");
    });
    order.push("committed");
    expect(order).toEqual(["body done", "hook", "committed"]);
  });
});
