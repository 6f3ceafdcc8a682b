import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { database } from "@/server/db/client";
import { flushClosedWindows } from "@/server/governance/anonymousRefusals";
import { leafBytes, hashLeaf } from "@/server/provenance/record";
import { apiKey, call, provenanceCount, useTestServer } from "./harness";

/**
 * Issue 26, item 16: refusals of callers nobody authenticated no longer write a record each (300
 * token-less requests wrote 300). Per minute and per (route class, status): the first refusal has
 * its own record, and one more record counts the window's refusals once it has closed. The clock
 * is pinned inside a minute: the windows are per minute.
 */
const t = useTestServer();
const MINUTE = Date.UTC(2032, 0, 1, 0, 0, 0);

beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(MINUTE + 5_000);
});
afterAll(() => vi.useRealTimers());

const windows = async () =>
  (await database()).read.provenanceRecord.findMany({
    where: { resourceType: "refusal_window" },
    orderBy: { seq: "asc" },
  });

describe("refusals without a caller (issue 26, item 16)", () => {
  it("300 token-less requests leave a bounded number of records that still count every one", async () => {
    const before = await provenanceCount();
    const statuses: Record<number, number> = {};
    for (let i = 0; i < 300; i++) {
      const res = await fetch(`${t.server.url}/v1/passports`, {
        headers: i % 2 === 0 ? {} : { Authorization: "Bearer not.a.token" },
      });
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      await res.arrayBuffer();
    }
    for (let i = 0; i < 20; i++) expect((await call(t.server.url, "GET", `/v1/nothing-here-${i}`)).status).toBe(404);
    // The default anonymous limit, 120 a minute per address and route: the rest are 429s.
    expect(statuses).toEqual({ 401: 120, 429: 180 });
    // While the window is open: one record per route class and status (401, 429, the unknown paths' 404).
    expect((await provenanceCount()) - before).toBe(3);

    // The window closes: one record each says how many there were.
    vi.setSystemTime(MINUTE + 65_000);
    expect(await flushClosedWindows()).toBe(3);
    expect((await provenanceCount()) - before).toBe(6);
    const counted = await windows();
    expect(counted.map((r) => [r.operation, r.status, r.decision, r.actorDid, r.resourceId]).sort()).toEqual(
      [
        ["GET (unknown path)", 404, "denied", null, `${new Date(MINUTE).toISOString()}/20`],
        ["GET /v1/passports", 401, "denied", null, `${new Date(MINUTE).toISOString()}/120`],
        ["GET /v1/passports", 429, "denied", null, `${new Date(MINUTE).toISOString()}/180`],
      ].sort(),
    );
    // Nothing more to write, and the count records are ledger records like any other.
    expect(await flushClosedWindows()).toBe(0);
    // A key made now: the root key of the file was made before the clock was moved years ahead.
    const api = await call(t.server.url, "GET", `/v1/provenance/${counted[0]!.id}`, { token: (await apiKey()).token });
    expect(api.status).toBe(200);
    const { leaf_hash, ...rest } = api.body;
    expect(hashLeaf(leafBytes(rest)).toString("base64")).toBe(leaf_hash);
  });

  it("a new window starts with a record of its own again", async () => {
    vi.setSystemTime(MINUTE + 125_000);
    const before = await provenanceCount();
    for (let i = 0; i < 5; i++) expect((await call(t.server.url, "GET", "/v1/passports")).status).toBe(401);
    expect((await provenanceCount()) - before).toBe(1);
  });
});
