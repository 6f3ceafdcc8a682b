import { describe, expect, it } from "vitest";
import { SubscriptionIndex } from "./matcher";
import { EventBody, isEventPattern } from "./schemas";

describe("the subscription index", () => {
  const index = new SubscriptionIndex();
  index.add("org", "exact", ["invoice.paid"]);
  index.add("org", "family", ["invoice.*"]);
  index.add("org", "deep", ["invoice.line.*", "refund.issued"]);
  index.add("other", "elsewhere", ["invoice.*"]);

  it("matches exact types exactly", () => {
    expect(index.match("org", "invoice.paid").sort()).toEqual(["exact", "family"]);
    expect(index.match("org", "refund.issued")).toEqual(["deep"]);
    expect(index.match("org", "refund.issued.late")).toEqual([]);
  });

  it("matches a trailing .* on every longer type under the prefix, not the prefix itself nor a longer word", () => {
    expect(index.match("org", "invoice.line.added").sort()).toEqual(["deep", "family"]);
    expect(index.match("org", "invoice")).toEqual([]);
    expect(index.match("org", "invoices.x")).toEqual([]);
    expect(index.match("org", "invoice.line")).toEqual(["family"]);
  });

  it("keeps organizations apart", () => {
    expect(index.match("other", "invoice.paid")).toEqual(["elsewhere"]);
    expect(index.match("nobody", "invoice.paid")).toEqual([]);
  });

  it("lists a subscription once even when several of its patterns match", () => {
    const i = new SubscriptionIndex();
    i.add("o", "s", ["a.*", "a.b.*", "a.b.c"]);
    expect(i.match("o", "a.b.c")).toEqual(["s"]);
  });
});

describe("event types and patterns", () => {
  it("accepts dot notation only", () => {
    for (const ok of ["invoice.paid", "a", "a_b.c9", "x".repeat(200)])
      expect(EventBody.safeParse({ type: ok }).success, ok).toBe(true);
    for (const bad of ["Invoice..paid", "*", "a.*.b", "a.*", "x".repeat(201), "", ".a", "a.", "a-b", "A.b"])
      expect(EventBody.safeParse({ type: bad }).success, bad).toBe(false);
  });

  it("takes a type or a prefix ending in .* as a pattern", () => {
    for (const ok of ["invoice.*", "invoice.paid", "a.b.*"]) expect(isEventPattern(ok), ok).toBe(true);
    for (const bad of ["*", ".*", "a.*.b", "a.**", "a*", "Invoice.*", `${"x".repeat(199)}.*`])
      expect(isEventPattern(bad), bad).toBe(false);
  });
});

describe("refreshing the index", () => {
  it("makes concurrent callers wait for the rebuild in flight instead of matching the index it replaces", async () => {
    const slow = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 30));
    // The three reads a refresh makes: the version row, the table's fingerprint, the active subscriptions.
    const db = {
      serviceState: { findUnique: () => slow({ value: "v1" }) },
      $queryRawUnsafe: () => slow([{ n: "1", m: "2026-11-22" }]),
      subscription: { findMany: () => slow([{ id: "sub", orgDid: "org", eventTypes: ["invoice.*"] }]) },
    } as unknown as Parameters<SubscriptionIndex["refresh"]>[0];
    const index = new SubscriptionIndex();
    const seen = await Promise.all(
      [0, 70, 80].map(async (delay) => {
        // The first looks at the version (30 ms) and the fingerprint (30 ms), then reads the rows (30 ms):
        // the later ones arrive once the fingerprint is taken, while the rows are being read.
        await new Promise((r) => setTimeout(r, delay));
        await index.refresh(db, "sqlite");
        return index.match("org", "invoice.paid");
      }),
    );
    expect(seen).toEqual([["sub"], ["sub"], ["sub"]]);
  });
});
