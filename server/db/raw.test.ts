import { describe, expect, it } from "vitest";
import { Mutex } from "./mutex";
import { forEngine } from "./raw";

describe("one placeholder style", () => {
  it("PostgreSQL takes $n as written; SQLite gets ? with the parameters in placeholder order, repeats included", () => {
    const sql = `SELECT * FROM "t" WHERE "b" = $2 AND "a" = $1 OR "c" = $2`;
    expect(forEngine("postgresql", sql, ["a", "b"])).toEqual([sql, "a", "b"]);
    expect(forEngine("sqlite", sql, ["a", "b"])).toEqual([
      `SELECT * FROM "t" WHERE "b" = ? AND "a" = ? OR "c" = ?`,
      "b",
      "a",
      "b",
    ]);
    // JSON paths and other dollar signs that are not $<digits> are left alone.
    expect(forEngine("sqlite", `SELECT json_extract("j", '$.d') FROM "t" WHERE "x" = $1`, [1])).toEqual([
      `SELECT json_extract("j", '$.d') FROM "t" WHERE "x" = ?`,
      1,
    ]);
  });
});

describe("the write lock", () => {
  it("serializes holders, and lets a holder take it again without waiting for itself", async () => {
    const lock = new Mutex();
    const order: string[] = [];
    const first = lock.run(async () => {
      order.push("first in");
      await lock.run(async () => order.push("first again"));
      await new Promise((r) => setTimeout(r, 20));
      order.push("first out");
    });
    const second = lock.run(async () => order.push("second"));
    await Promise.all([first, second]);
    expect(order).toEqual(["first in", "first again", "first out", "second"]);
  });

  it("is not held by work that outlives its holder (a timer the holder set)", async () => {
    const lock = new Mutex();
    const order: string[] = [];
    let late!: Promise<void>;
    await lock.run(async () => {
      late = new Promise<void>((resolve) =>
        setTimeout(() => void lock.run(async () => void order.push("late")).then(resolve), 10),
      );
    });
    const other = lock.run(async () => {
      await new Promise((r) => setTimeout(r, 30));
      order.push("other");
    });
    await Promise.all([late, other]);
    expect(order).toEqual(["other", "late"]);
  });
});

describe("the statement cache", () => {
  it("keeps a statement first run after the cache filled, dropping the one kept longest", async () => {
    const { sqliteTransactionQueryable, STATEMENT_CACHE_SIZE } = await import("./raw");
    const prepared: string[] = [];
    const q = sqliteTransactionQueryable((sql) => {
      prepared.push(sql);
      return { reader: false, run: () => ({ changes: 0 }) } as never;
    });
    // Texts that vary (an IN list of every length, a name per savepoint) fill it first.
    for (let i = 0; i < STATEMENT_CACHE_SIZE + 10; i++) await q.execute(`SAVEPOINT s${i}`);
    for (let i = 0; i < 3; i++) await q.execute(`INSERT INTO "t" VALUES ($1)`, [i]);
    expect(prepared.filter((s) => s.startsWith("INSERT"))).toHaveLength(1);
    await q.execute(`SAVEPOINT s0`);
    expect(prepared.filter((s) => s === "SAVEPOINT s0")).toHaveLength(2);
  });
});
