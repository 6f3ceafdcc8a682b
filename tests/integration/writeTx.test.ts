import { describe, expect, it } from "vitest";
import { database, sqlIn } from "@/server/db/client";

/**
 * SQLite's write transaction runs on the writer connection's own BEGIN and COMMIT (issue 30), not
 * Prisma's interactive transaction: what `fn` writes, through raw SQL or Prisma, commits or rolls
 * back as one, and a transaction Prisma Client starts inside it nests as a savepoint.
 */
// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;

type Inner = {
  $transaction<T>(fn: (tx: { $executeRawUnsafe(sql: string): Promise<number> }) => Promise<T>): Promise<T>;
};

describe("write transactions on SQLite", () => {
  onSqliteOnly("commit together, roll back together, and nest Prisma's own transactions as savepoints", async () => {
    const db = await database();
    await db.writeTx((tx) => sqlIn(tx, db.engine).execute(`CREATE TABLE IF NOT EXISTS "write_tx_probe" ("v" TEXT)`));
    const values = async () =>
      (await db.raw.query<{ v: string }>(`SELECT "v" FROM "write_tx_probe" ORDER BY "v"`)).map((r) => r.v);

    await db.writeTx(async (tx) => {
      await sqlIn(tx, db.engine).execute(`INSERT INTO "write_tx_probe" ("v") VALUES ('a raw')`);
      await tx.$executeRawUnsafe(`INSERT INTO "write_tx_probe" ("v") VALUES ('b prisma')`);
    });
    await expect(
      db.writeTx(async (tx) => {
        await sqlIn(tx, db.engine).execute(`INSERT INTO "write_tx_probe" ("v") VALUES ('x raw')`);
        await tx.$executeRawUnsafe(`INSERT INTO "write_tx_probe" ("v") VALUES ('x prisma')`);
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await values()).toEqual(["a raw", "b prisma"]);

    await db.writeTx(async (tx) => {
      await sqlIn(tx, db.engine).execute(`INSERT INTO "write_tx_probe" ("v") VALUES ('c outer')`);
      const nesting = tx as unknown as Inner;
      await nesting.$transaction((inner) =>
        inner.$executeRawUnsafe(`INSERT INTO "write_tx_probe" ("v") VALUES ('d kept')`),
      );
      await expect(
        nesting.$transaction(async (inner) => {
          await inner.$executeRawUnsafe(`INSERT INTO "write_tx_probe" ("v") VALUES ('y dropped')`);
          throw new Error("inner only");
        }),
      ).rejects.toThrow("inner only");
      await sqlIn(tx, db.engine).execute(`INSERT INTO "write_tx_probe" ("v") VALUES ('e after')`);
    });
    expect(await values()).toEqual(["a raw", "b prisma", "c outer", "d kept", "e after"]);
  });
});
