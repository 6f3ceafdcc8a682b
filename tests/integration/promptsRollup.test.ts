import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { database, type Database, type Db } from "@/server/db/client";
import type { Principal } from "@/server/governance/principal";
import { newId } from "@/server/ids";
import { computePromptAffinity, scorePromptAffinity } from "@/server/prompts/computePromptAffinity";
import { promptCallGroups, promptCallGroupsFromCalls, type PromptCallGroup } from "@/server/prompts/promptCallGroups";
import { recordFeedback } from "@/server/reasoning/calls";
import { reasoningTasks } from "@/server/reasoning/tasks";
import { listPromptAffinity } from "@/server/prompts/listPromptAffinity";
import { rootOrgDid } from "@/server/setup/bootstrap";

/**
 * The performance and affinity reports read a daily rollup that triggers keep as calls are
 * recorded, settle and receive feedback (late feedback included), plus the calls of the window's
 * first, partial day. On random calls, changed the ways the service changes them, the rollup-based
 * report must be the report computed from the calls alone, for any window and any moment.
 */

const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-11-20T15:37:11.250Z");
const SIGNALS = ["positive", "negative", "rephrase", "correction"] as const;

// A small seeded generator: the same data on both engines and every run.
let seed = 0x2f6e2b1;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x80000000;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

let db: Database;
let orgDid: string;
const OTHER_ORG = "did:key:z6MkrollupOtherOrganization";
const ids: string[] = [];

function callRow(org: string) {
  const status = pick(["succeeded", "succeeded", "succeeded", "failed", "pending"]);
  const pending = status === "pending";
  const tokens = Math.floor(random() * 2000);
  return {
    id: newId("rsn"),
    orgDid: org,
    task: "general",
    complexity: "medium",
    budgetMode: "optimize",
    model: random() < 0.03 ? null : pick(["m-small", "m-large", "m-mid"]),
    provider: pick(["p-one", "p-two"]),
    status,
    reason: "test",
    alternatives: [],
    inputTokens: pending ? 0 : tokens,
    outputTokens: pending ? 0 : Math.floor(tokens / 3),
    costUsd: pending ? 0 : Math.round(random() * 1e6) / 1e9,
    durationMs: pending || random() < 0.05 ? null : 50 + Math.floor(random() * 3000),
    requestId: "req_rollup",
    feedbackSignal: random() < 0.3 ? pick(SIGNALS) : null,
    promptKey: random() < 0.1 ? null : pick(["alpha", "beta", "gamma", "beta-x", "beta.x", "betax"]),
    promptVersion: pick(["1.0.0", "1.1.0", null]),
    // 40 days back from NOW, a few in its future (clocks differ between processes).
    createdAt: new Date(NOW - Math.floor(random() * 40 * DAY_MS) + (random() < 0.02 ? DAY_MS : 0)),
  };
}

const byGroup = (a: PromptCallGroup, b: PromptCallGroup) =>
  a.promptKey.localeCompare(b.promptKey) || a.modelId.localeCompare(b.modelId) || a.provider.localeCompare(b.provider);

/** The groups, sorted, with the cost sum rounded (sums of floats in another order differ in the last bits). */
const comparable = (groups: PromptCallGroup[]) =>
  [...groups].sort(byGroup).map((g) => ({ ...g, costSum: Math.round(g.costSum * 1e12) }));

async function rollupRows() {
  const rows = await db.read.promptCallRollup.findMany({
    orderBy: [
      { orgDid: "asc" },
      { promptKey: "asc" },
      { model: "asc" },
      { provider: "asc" },
      { promptVersion: "asc" },
      { day: "asc" },
    ],
  });
  return rows.map((r) => ({ ...r, costSum: Math.round(r.costSum * 1e12) }));
}

async function expectReportsFromCalls() {
  const engine = db.engine;
  for (const windowDays of [1, 2, 7, 30, 365])
    for (const hoursBack of [0, 5, 17.5, 30]) {
      const now = new Date(NOW - hoursBack * 3_600_000);
      const since = new Date(now.getTime() - windowDays * DAY_MS);
      for (const promptKey of [undefined, "beta"]) {
        const rolled = await promptCallGroups(db.read, engine, orgDid, { since, promptKey });
        const fromCalls = await promptCallGroupsFromCalls(db.read, engine, orgDid, { since, promptKey });
        expect(comparable(rolled), `${windowDays} days before ${now.toISOString()}`).toEqual(comparable(fromCalls));
        const report = await computePromptAffinity(db.read, orgDid, { engine, windowDays, promptKey, now });
        expect(report).toEqual(scorePromptAffinity(fromCalls));
      }
      const minSample = 25;
      const report = await computePromptAffinity(db.read, orgDid, { engine, windowDays, minSample, now });
      const fromCalls = await promptCallGroupsFromCalls(db.read, engine, orgDid, { since });
      expect(report).toEqual(scorePromptAffinity(fromCalls.filter((g) => g.calls >= minSample)));
    }
}

beforeAll(async () => {
  db = await database();
  orgDid = (await rootOrgDid(db))!;
  const rows = [
    ...Array.from({ length: 1500 }, () => callRow(orgDid)),
    ...Array.from({ length: 200 }, () => callRow(OTHER_ORG)),
  ];
  for (const r of rows) if (r.orgDid === orgDid) ids.push(r.id);
  await db.writeTx((tx) => tx.reasoningCall.createMany({ data: rows }));
}, 60_000);

describe("the prompt call rollup", () => {
  it("gives the reports the calls give, as recorded", async () => {
    const rolled = await promptCallGroups(db.read, db.engine, orgDid, { since: new Date(NOW - 30 * DAY_MS) });
    expect(rolled.reduce((n, g) => n + g.calls, 0)).toBeGreaterThan(500);
    await expectReportsFromCalls();
  }, 120_000);

  it("follows calls as they settle, late feedback (on the call's day), deletions and a stale settle", async () => {
    const principal = { orgDid, actorDid: orgDid } as Principal;
    // Feedback arriving days after the call, replaced, and cleared (a neutral score), through the
    // service, a few calls per transaction (the machine is shared: fewer commits).
    const inChunks = async <T>(items: T[], fn: (tx: Db, item: T) => Promise<unknown>) => {
      for (let i = 0; i < items.length; i += 40)
        await db.writeTx(async (tx) => {
          for (const item of items.slice(i, i + 40)) await fn(tx, item);
        });
    };
    await inChunks(ids.slice(0, 300), (tx, id) => {
      const signal = random() < 0.25 ? undefined : pick(SIGNALS);
      return recordFeedback(tx, principal, id, signal === undefined ? { score: 0 } : { signal, comment: "later" });
    });
    const pending = await db.read.reasoningCall.findMany({
      where: { orgDid, status: "pending" },
      select: { id: true },
    });
    expect(pending.length).toBeGreaterThan(50);
    // Half settle as the service settles them (a fallback may answer with another model)...
    await inChunks(pending.slice(0, Math.floor(pending.length / 2)), (tx, { id }) =>
      tx.reasoningCall.update({
        where: { id },
        data: {
          status: pick(["succeeded", "failed"]),
          model: pick(["m-small", "m-large", "m-mid"]),
          inputTokens: 120,
          outputTokens: 40,
          costUsd: 0.000321,
          durationMs: 900,
          completedAt: new Date(),
        },
      }),
    );
    // ...the rest are abandoned: the worker's task marks them failed.
    expect(await reasoningTasks[0]!.run(db)).toBeGreaterThan(0);
    // A settled cost corrected in place, a call moved to another day, and calls deleted.
    await db.writeTx(async (tx) => {
      await tx.reasoningCall.update({ where: { id: ids[400]! }, data: { costUsd: 0.5, durationMs: 12 } });
      await tx.reasoningCall.update({ where: { id: ids[401]! }, data: { createdAt: new Date(NOW - 3 * DAY_MS) } });
      await tx.reasoningCall.deleteMany({ where: { id: { in: ids.slice(402, 420) } } });
    });
    // Feedback on an already-settled call again, the way the API records it.
    await inChunks(ids.slice(500, 700), (tx, id) => recordFeedback(tx, principal, id, { signal: pick(SIGNALS) }));
    await expectReportsFromCalls();
    // No rollup row is left counting nothing.
    expect(await db.read.promptCallRollup.count({ where: { calls: { lte: 0 } } })).toBe(0);
  }, 240_000);

  it("pages the affinity report, each page read from its cursor's prompt on", async () => {
    const principal = { orgDid, actorDid: orgDid } as Principal;
    const secret = Buffer.alloc(32, 7);
    const whole = await listPromptAffinity(
      db.read,
      db.engine,
      principal,
      { window_days: 30, min_sample: 1, limit: 1000 },
      secret,
    );
    expect(whole.data.length).toBeGreaterThan(10);
    const paged: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPromptAffinity(
        db.read,
        db.engine,
        principal,
        { window_days: 30, min_sample: 1, limit: 4, cursor },
        secret,
      );
      paged.push(...page.data);
      cursor = page.pagination.next_cursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(whole.data);
  });

  it("is what the migration's backfill computes from the calls", async () => {
    const kept = await rollupRows();
    const sql = readFileSync(
      join(
        "prisma/migrations",
        db.engine === "sqlite" ? "sqlite" : "postgresql",
        "20261127061500_prompts_affinity_rollup/migration.sql",
      ),
      "utf8",
    );
    const backfill = /^INSERT INTO "prompt_call_rollup"[\s\S]*?;$/m.exec(sql)?.[0];
    expect(backfill).toBeDefined();
    await db.writeTx(async (tx) => {
      await tx.$executeRawUnsafe(`DELETE FROM "prompt_call_rollup"`);
      await tx.$executeRawUnsafe(backfill!);
    });
    expect(await rollupRows()).toEqual(kept);
  });
});
