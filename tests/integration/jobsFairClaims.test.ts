import { describe, expect, it } from "vitest";
import { database } from "@/server/db/client";
import { countStatements } from "@/server/db/statements";
import { claimJobs } from "@/server/jobs/claim";
import { enqueue } from "@/server/jobs";

/**
 * Fair claims (issue 15): a claim prefers the organizations with fewer running jobs of the kind,
 * so one organization flooding the queue cannot take every worker slot while another's jobs wait
 * behind its backlog. Claims are made directly (no worker), so the order is the claim's own.
 */

const ORG_A = "did:example:flooding-org";
const ORG_B = "did:example:quiet-org";
const LEASE_MS = 60_000;

/** Queues `n` jobs of `kind` for `org`, the i-th `ageMs - i` ms old (older first). */
async function queue(kind: string, org: string | undefined, n: number, ageMs: number): Promise<string[]> {
  const db = await database();
  const base = Date.now() - ageMs;
  return db.writeTx(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(await enqueue(tx, kind, { org, i }, { orgDid: org, runAt: new Date(base + i) }));
    return ids;
  });
}

const claim = async (kind: string, limit: number) =>
  claimJobs(await database(), "fair-test-worker", kind, limit, LEASE_MS);

describe("claims prefer organizations with fewer running jobs", () => {
  it("gives each organization's oldest job a turn before a flooding organization's second", async () => {
    const kind = "test.fair.flood";
    const a = await queue(kind, ORG_A, 200, 60_000); // the oldest by far: strict FIFO would claim only these
    const b = await queue(kind, ORG_B, 3, 10_000);
    const platform = await queue(kind, undefined, 2, 5_000);

    const first = await claim(kind, 4);
    expect(first.map((j) => j.id).sort()).toEqual([a[0], a[1], b[0], platform[0]].sort());
    expect(first.find((j) => j.id === b[0])?.orgDid).toBe(ORG_B);

    // A now runs 2, B and the platform group 1 each: B's and the platform's next come before A's third.
    const second = await claim(kind, 2);
    expect(second.map((j) => j.id).sort()).toEqual([b[1], platform[1]].sort());
  });

  it("makes an organization already holding many running jobs wait behind one holding none", async () => {
    const kind = "test.fair.running";
    const a = await queue(kind, ORG_A, 6, 60_000);
    expect((await claim(kind, 3)).map((j) => j.id).sort()).toEqual(a.slice(0, 3).sort()); // alone: FIFO
    const b = await queue(kind, ORG_B, 3, 1_000); // newer than every queued A job
    // A holds 3 running: its next ranks 4; B's three rank 1, 2, 3.
    expect((await claim(kind, 3)).map((j) => j.id).sort()).toEqual(b.sort());
    expect((await claim(kind, 5)).map((j) => j.id).sort()).toEqual(a.slice(3).sort());
  });

  it("counts only the kind's running jobs, claims no job before its time, and costs one statement", async () => {
    const kind = "test.fair.kind";
    const other = "test.fair.other";
    await queue(other, ORG_B, 5, 60_000);
    await claim(other, 5); // B runs 5 jobs of another kind: no weight here
    const b = await queue(kind, ORG_B, 2, 50_000);
    const a = await queue(kind, ORG_A, 2, 40_000);
    const db = await database();
    await db.writeTx((tx) => enqueue(tx, kind, {}, { orgDid: ORG_A, runAt: new Date(Date.now() + 60_000) }));

    const { value, count } = await countStatements(() => claim(kind, 10));
    expect(count).toBe(1);
    expect(value.map((j) => j.id).sort()).toEqual([...a, ...b].sort());
    expect(await claim(kind, 10)).toEqual([]);
  });

  it("claims nothing from an empty queue", async () => {
    expect(await claim("test.fair.empty", 5)).toEqual([]);
  });
});
