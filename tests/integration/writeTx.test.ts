import { describe, expect, it } from "vitest";
import { database, sqlIn } from "@/server/db/client";

/**
 * A write transaction commits or rolls back as one, whatever its statements went through (raw SQL
 * or Prisma). SQLite's runs on the writer connection's own BEGIN and COMMIT (issue 30), not
 * Prisma's interactive transaction, so a transaction Prisma Client starts inside it nests as a
 * savepoint.
 */
// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;

type Inner = {
  $transaction<T>(fn: (tx: { $executeRawUnsafe(sql: string): Promise<number> }) => Promise<T>): Promise<T>;
};

describe("write transactions", () => {
  // Each run writes under a prefix of its own: PostgreSQL's test database outlives one run.
  const run = `r${Date.now()}`;
  const values = async () => {
    const db = await database();
    const rows = await db.raw.query<{ v: string }>(`SELECT "v" FROM "write_tx_probe" WHERE "v" LIKE $1 ORDER BY "v"`, [
      `${run} %`,
    ]);
    return rows.map((r) => r.v.slice(run.length + 1));
  };
  const insert = (v: string) => `INSERT INTO "write_tx_probe" ("v") VALUES ('${run} ${v}')`;

  it("what a write transaction writes, raw or through Prisma, commits together and rolls back together", async () => {
    const db = await database();
    await db.writeTx((tx) => sqlIn(tx, db.engine).execute(`CREATE TABLE IF NOT EXISTS "write_tx_probe" ("v" TEXT)`));
    await db.writeTx(async (tx) => {
      await sqlIn(tx, db.engine).execute(insert("a raw"));
      await tx.$executeRawUnsafe(insert("b prisma"));
    });
    await expect(
      db.writeTx(async (tx) => {
        await sqlIn(tx, db.engine).execute(insert("x raw"));
        await tx.$executeRawUnsafe(insert("x prisma"));
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await values()).toEqual(["a raw", "b prisma"]);
  });

  onSqliteOnly("a transaction Prisma Client starts inside one nests as a savepoint (SQLite)", async () => {
    const db = await database();
    await db.writeTx(async (tx) => {
      await sqlIn(tx, db.engine).execute(insert("c outer"));
      const nesting = tx as unknown as Inner;
      await nesting.$transaction((inner) => inner.$executeRawUnsafe(insert("d kept")));
      await expect(
        nesting.$transaction(async (inner) => {
          await inner.$executeRawUnsafe(insert("y dropped"));
          throw new Error("inner only");
        }),
      ).rejects.toThrow("inner only");
      await sqlIn(tx, db.engine).execute(insert("e after"));
    });
    expect(await values()).toEqual(["a raw", "b prisma", "c outer", "d kept", "e after"]);
  });
});
