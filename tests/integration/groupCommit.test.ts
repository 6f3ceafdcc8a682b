import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { afterCommit, database } from "@/server/db/client";
import { commitGrouped } from "@/server/db/groupCommit";
import { countStatements } from "@/server/db/statements";
import { governCall, operationSpec } from "@/server/governance/governCall";
import { enqueue } from "@/server/jobs";
import { shutdownSandbox } from "@/server/sandbox/pool";
import { deployAndWait } from "./agentsHelpers";
import { call, useTestServer } from "./harness";
import { expectLedgerVerifies } from "./ledgerVerify";
import { killProcessGroups, startServingProcess } from "./processes";

/**
 * Group commit (issue 15, item 1): write calls arriving together share one transaction, each in
 * its own savepoint.
 */
// Engine-specific tests are not registered at all on the other engine: a skipped test fails CI.
const itNever = (..._args: unknown[]) => undefined;
// The kill -9 test runs once, on SQLite, as the other process-level tests (vitest.config.ts): the
// group commit is the same code on both engines (its statements are tested on both above), and a
// kill leaves PostgreSQL's server untouched, where SQLite's database lives in the killed process.
const onSqliteOnly = process.env.SVC_TEST_ENGINE === "postgres" ? itNever : it;

const ctx = useTestServer();
const children: ChildProcess[] = [];
afterAll(async () => {
  killProcessGroups(children);
  await shutdownSandbox();
});

const SPEC = operationSpec({
  id: "test:group",
  method: "POST",
  path: "/test/group",
  capability: null,
  resourceType: "job",
  successStatus: 201,
});
const FAR = new Date(Date.now() + 86_400_000);

describe("group commit in the gate", () => {
  it("a call that fails among committing ones rolls back alone; each answer leaves after its commit and its record's position", async () => {
    const db = await database();
    const N = 12;
    const FAILING = 5;
    const ran: number[] = [];
    const hooks: number[] = [];
    const visibleAtAnswer: boolean[] = [];
    const calls = Array.from({ length: N }, (_, i) =>
      governCall(
        SPEC,
        { authorization: `Bearer ${ctx.root.token}`, clientAddress: "127.0.0.1", requestId: `req_group_${i}` },
        async () => ({}),
        async (scope) => {
          const id = await enqueue(scope.db, "test.group", { i }, { id: `job_group_${i}_${Date.now()}`, runAt: FAR });
          scope.setResource(id);
          afterCommit(scope.db, () => hooks.push(i));
          ran.push(i);
          // A statement that fails (a duplicate key): on PostgreSQL it aborts the transaction up to the savepoint.
          if (i === FAILING) await enqueue(scope.db, "test.group", { i }, { id, runAt: FAR });
          return id;
        },
      ).then(async (r) => {
        // Another connection sees the write the moment the answer leaves: it has committed.
        visibleAtAnswer[i] = (await db.read.job.count({ where: { id: r.value as string } })) === 1;
        return r;
      }),
    );
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(
      Array.from({ length: N }, (_, i) => (i === FAILING ? "rejected" : "fulfilled")),
    );
    expect(visibleAtAnswer.filter(Boolean)).toHaveLength(N - 1);
    // The failing call's write and its after-commit work are gone; the others' are there.
    expect(await db.read.job.count({ where: { kind: "test.group", payload: JSON.stringify({ i: FAILING }) } })).toBe(0);
    expect(await db.read.job.count({ where: { kind: "test.group" } })).toBe(N - 1);
    expect(hooks.sort((a, b) => a - b)).toEqual(ran.filter((i) => i !== FAILING).sort((a, b) => a - b));

    // Every call has exactly one record, with its position (each answer waited for it): the
    // committed ones a success, the failing one a refusal; nothing is recorded as done that did
    // not commit (the rolled-back write has no record of its own).
    const records = await db.read.provenanceRecord.findMany({
      where: { requestId: { startsWith: "req_group_" } },
      orderBy: { seq: "asc" },
    });
    expect(records.map((r) => r.requestId).sort()).toEqual(calls.map((_, i) => `req_group_${i}`).sort());
    const committed = records
      .filter((r) => r.status === 201)
      .map((r) => Number(r.requestId.slice("req_group_".length)));
    expect(committed.sort((a, b) => a - b)).toEqual(ran.filter((i) => i !== FAILING).sort((a, b) => a - b));
    expect(records.find((r) => r.requestId === `req_group_${FAILING}`)!.status).toBeGreaterThanOrEqual(400);
    expect(await db.raw.query(`SELECT "id" FROM "ledger_pending"`)).toEqual([]);
    // The order of positions is the order the ledger gave them in: along the positions the
    // records' timestamps never go back. (Which member of a group ran first is not asserted: a
    // member's function and its record's append are not one step, and under load two members'
    // appends were seen in the other order on SQLite.)
    const stamps = records.map((r) => r.timestamp.getTime());
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    // The ledger is dense: every committed record has exactly one position, none was skipped or
    // taken twice, and none went to the rolled-back write.
    const all = await db.read.provenanceRecord.findMany({ select: { seq: true }, orderBy: { seq: "asc" } });
    expect(all.map((r) => Number(r.seq))).toEqual(all.map((_, i) => i));
    await expectLedgerVerifies(ctx.server.url, ctx.root.token, "svc-group-");
  });

  it("a call answered before another is sent has the lower position, on either engine", async () => {
    const db = await database();
    const seqs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await governCall(
        SPEC,
        { authorization: `Bearer ${ctx.root.token}`, clientAddress: "127.0.0.1", requestId: `req_after_${i}` },
        async () => ({}),
        async (scope) => {
          const id = await enqueue(scope.db, "test.after", { i }, { runAt: FAR });
          scope.setResource(id);
          return id;
        },
      );
      expect(r.status).toBe(201);
      // Read at once, from another connection: the answer left after the record had its position.
      const record = await db.read.provenanceRecord.findFirstOrThrow({ where: { requestId: `req_after_${i}` } });
      seqs.push(Number(record.seq));
    }
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(3);
  });

  it("several calls share one transaction", async () => {
    const db = await database();
    const txs = new Set<unknown>();
    await Promise.all(Array.from({ length: 8 }, () => commitGrouped(db, async (tx) => void txs.add(tx))));
    expect(txs.size).toBeLessThan(8);
  });

  it("every group's savepoints are the same SQL text, so their statements stay prepared", async () => {
    const db = await database();
    // A name per member made each SAVEPOINT a new statement text: prepared afresh every time, and
    // filling the writer's statement cache until nothing new was kept prepared (db/raw.ts).
    const { statements } = await countStatements(async () => {
      for (let round = 0; round < 3; round++)
        await Promise.all(Array.from({ length: 4 }, () => commitGrouped(db, async () => undefined)));
    });
    const savepoints = statements.filter((s) => /SAVEPOINT/i.test(s));
    expect(savepoints.length).toBeGreaterThan(0);
    expect(new Set(savepoints)).toEqual(new Set(["SAVEPOINT svc_member", "RELEASE SAVEPOINT svc_member"]));
  });

  it("retryable work (a run's or a delivery's outcome) shares a transaction without savepoints; one that throws is run again alone, the others commit once", async () => {
    const db = await database();
    const runs = new Map<number, number>();
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        commitGrouped(
          db,
          async (tx) => {
            runs.set(i, (runs.get(i) ?? 0) + 1);
            await enqueue(tx, "test.retryable", { i }, { runAt: FAR });
            if (i === 2) throw new Error("this one fails");
          },
          { retryable: true },
        ),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    const rows = await db.read.job.findMany({ where: { kind: "test.retryable" } });
    expect(rows.map((r) => JSON.parse(r.payload).i).sort()).toEqual([0, 1, 3, 4, 5]);
    expect(Math.max(...runs.values())).toBeLessThanOrEqual(2);
  });

  onSqliteOnly("a kill -9 in the middle of a group loses no acknowledged call, and the ledger verifies", async () => {
    const agentId = await deployAndWait(
      ctx.server.url,
      ctx.root.token,
      "group-crash",
      `export default async (input) => ({ n: input.n })`,
    );
    const db = await database();
    const { url, child } = await startServingProcess("workerProcess", {
      env: { SVC_SANDBOX_THREADS: "1", SVC_JOB_LEASE_MS: "1000" },
      detached: true,
      children,
    });
    const acknowledged: string[] = [];
    let sent = 0;
    let stop = false;
    // 24 clients at once, so that groups form; the kill lands while calls are in flight.
    const client = async () => {
      while (!stop) {
        sent++;
        const a = await call(url, "POST", `/v1/agents/${agentId}/invoke`, {
          token: ctx.root.token,
          body: { input: { n: sent } },
        }).catch(() => undefined);
        if (a?.status === 202) acknowledged.push(a.body.id as string);
      }
    };
    const clients = Array.from({ length: 24 }, client);
    await expect.poll(() => acknowledged.length, { timeout: 30_000, interval: 5 }).toBeGreaterThanOrEqual(150);
    process.kill(-child.pid!, "SIGKILL");
    stop = true;
    await Promise.all(clients);
    // Usually some calls are in flight at the kill; on a loaded machine every client may sit between
    // two calls at that instant, so this is not asserted (a test must not depend on the load): what
    // is asserted is that every acknowledged call survived.
    expect(sent).toBeGreaterThanOrEqual(acknowledged.length);
    const found = await db.read.asyncExecution.findMany({
      where: { id: { in: acknowledged } },
      select: { id: true, provenanceId: true },
    });
    expect(found.map((r) => r.id).sort()).toEqual([...acknowledged].sort());
    // Each acknowledged invoke's record committed with it.
    const records = await db.read.provenanceRecord.count({
      where: { operation: { startsWith: "POST /v1/agents/" }, resourceId: { in: acknowledged }, status: 202 },
    });
    expect(records).toBe(acknowledged.length);
    await expectLedgerVerifies(ctx.server.url, ctx.root.token, "svc-group-");
  });
});
