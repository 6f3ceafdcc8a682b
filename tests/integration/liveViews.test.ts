import pg from "pg";
import { describe, expect, it } from "vitest";
import { closeChanges, notifyChange, publish, subscribeChanges, type Change } from "@/server/db/changes";
import { database } from "@/server/db/client";
import { appRouter } from "@/server/appRouter";
import { handlerWithSession } from "@/server/trpc/handler";
import { bundleOf, manifestOf } from "./agentsHelpers";
import { apiKey, call, useTestServer } from "./harness";
import { useReceiverAndWorker } from "./receiverAndWorker";
import { putEvent } from "./webhooksHelpers";

/**
 * Live views (issue "Governed writes at the machine's speed", item 4): the console's execution and
 * webhook pages follow one server-sent-events stream each (a tRPC subscription), fed by change
 * notifications (LISTEN/NOTIFY on PostgreSQL, in memory on SQLite). Opening it is one recorded
 * read; the updates on it write no records.
 */
process.env.SVC_SANDBOX_THREADS = "1";

const ctx = useTestServer();
const trpc = handlerWithSession(appRouter, async () => null);
const outbound = useReceiverAndWorker({ after: closeChanges });

interface Stream {
  /** The values received so far (tRPC's `data` events, parsed). */
  values: unknown[];
  /** Resolves with the first value that satisfies `pred` (within `timeoutMs`). */
  until(pred: (v: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): void;
  status: number;
  contentType: string | null;
}

/** Opens `path` as the browser's EventSource does (GET, Accept: text/event-stream) and parses its events. */
async function openStream(path: string, input: unknown, token: string): Promise<Stream> {
  const abort = new AbortController();
  const url = `http://127.0.0.1/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await trpc(
    new Request(url, {
      headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" },
      signal: abort.signal,
    }),
  );
  const values: unknown[] = [];
  const waiters = new Set<() => void>();
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1];
          const data = block
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.replace(/^data: ?/, ""))
            .join("\n");
          if (!event && data) values.push(JSON.parse(data));
          if (event === "serialized-error") values.push({ error: JSON.parse(data) });
          for (const w of waiters) w();
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    values,
    status: res.status,
    contentType: res.headers.get("content-type"),
    close: () => abort.abort(),
    until: (pred, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = values.find(pred);
          if (hit !== undefined) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hit);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(values).slice(0, 2000)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}

/** The ledger's records of calls under `delegationId`. */
async function recordsOf(delegationId: string) {
  const db = await database();
  return db.read.provenanceRecord.findMany({
    where: { delegationId },
    orderBy: { seq: "asc" },
    select: { operation: true, decision: true, status: true, resourceId: true },
  });
}

const STEPS = `export default async (input, ctx) => {
  for (const p of [20, 40, 60, 80]) { ctx.progress(p, "step " + p); ctx.log("at " + p); const t = Date.now(); while (Date.now() - t < 350) {} }
  return { done: true };
}`;

describe("live views over server-sent events", () => {
  it("an execution's stream carries its progress to the end; opening it is the only record", async () => {
    const deploy = await call(ctx.server.url, "POST", "/v1/agents/deploy", {
      token: ctx.root.token,
      body: { manifest: manifestOf("live-steps"), ...bundleOf(STEPS), wait: true },
    });
    expect(deploy.status).toBe(201);
    const viewer = await apiKey(["svc_api:executions:read"]);
    const invoked = await call(ctx.server.url, "POST", `/v1/agents/${deploy.body.data.agentId}/invoke`, {
      token: ctx.root.token,
      body: {},
    });
    expect(invoked.status).toBe(202);
    const id = invoked.body.id as string;

    const stream = await openStream("executions.live", { id }, viewer.token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain("text/event-stream");
    const end = await stream.until((v) => v.execution?.status === "completed");
    expect(end).toMatchObject({
      execution: { id, status: "completed", progress_percent: 100 },
      logs: { data: expect.arrayContaining([expect.objectContaining({ line: "at 80" })]) },
    });
    // Updates arrived while it ran, not only the first state and the last.
    const states = stream.values.map((v: any) => `${v.execution.status}:${v.execution.progress_percent}`);
    expect(new Set(states).size, states.join(" ")).toBeGreaterThanOrEqual(3);
    expect(
      states.some((s) => /^processing:(20|40|60|80)$/.test(s)),
      states.join(" "),
    ).toBe(true);
    stream.close();

    // One record for opening the stream, none for the updates on it.
    expect(await recordsOf(viewer.delegationId)).toEqual([
      { operation: "TRPC executions.live", decision: "allowed", status: 200, resourceId: id },
    ]);
  }, 60_000);

  it("the executions list's stream shows a new run appear and end", async () => {
    const deploy = await call(ctx.server.url, "POST", "/v1/agents/deploy", {
      token: ctx.root.token,
      body: { manifest: manifestOf("live-quick"), ...bundleOf("export default async () => 1"), wait: true },
    });
    const agentId = deploy.body.data.agentId as string;
    const viewer = await apiKey(["svc_api:executions:read"]);
    const stream = await openStream("executions.listLive", { limit: 5, agent_id: agentId }, viewer.token);
    const first = await stream.until(() => true);
    expect(first).toMatchObject({ data: [] });
    const invoked = await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, {
      token: ctx.root.token,
      body: {},
    });
    await stream.until((v) => v.data?.[0]?.id === invoked.body.id && v.data[0].status === "completed");
    stream.close();
    expect(await recordsOf(viewer.delegationId)).toEqual([
      { operation: "TRPC executions.listLive", decision: "allowed", status: 200, resourceId: null },
    ]);
  }, 60_000);

  it("a webhook's stream shows each delivery as it is logged, and its health", async () => {
    const created = await call(ctx.server.url, "POST", "/v1/webhooks", {
      token: ctx.root.token,
      body: { target_url: `${outbound.receiver.url}/live`, event_types: ["invoice.*"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const viewer = await apiKey(["svc_api:events:read"]);
    const stream = await openStream("webhooks.live", { id, limit: 10 }, viewer.token);
    expect(await stream.until(() => true)).toMatchObject({ webhook: { id }, deliveries: { data: [] } });
    await putEvent(ctx.root.orgDid, [id]);
    await putEvent(ctx.root.orgDid, [id]);
    const two = await stream.until((v) => v.deliveries?.data.length === 2);
    expect(two.deliveries.data.every((d: { success: boolean }) => d.success)).toBe(true);
    expect(two.webhook.health.last_success_at).not.toBeNull();
    stream.close();
    expect(await recordsOf(viewer.delegationId)).toEqual([
      { operation: "TRPC webhooks.live", decision: "allowed", status: 200, resourceId: id },
    ]);
  }, 60_000);

  it("opening is governed: a caller without the capability is refused, and that refusal is recorded", async () => {
    const outsider = await apiKey(["svc_api:events:read"]);
    const refused = await openStream("executions.live", { id: "exe_x" }, outsider.token);
    // tRPC answers a refused subscription as an error event (or status) and ends the stream.
    await refused.until((v) => v.error !== undefined).catch(() => undefined);
    refused.close();
    expect(await recordsOf(outsider.delegationId)).toEqual([
      { operation: "TRPC executions.live", decision: "denied", status: 403, resourceId: null },
    ]);
  });

  it("a revoked caller's stream ends at the next change", async () => {
    const deploy = await call(ctx.server.url, "POST", "/v1/agents/deploy", {
      token: ctx.root.token,
      body: { manifest: manifestOf("live-revoked"), ...bundleOf("export default async () => 2"), wait: true },
    });
    const agentId = deploy.body.data.agentId as string;
    const viewer = await apiKey(["svc_api:executions:read"]);
    const stream = await openStream("executions.listLive", { limit: 5, agent_id: agentId }, viewer.token);
    await stream.until(() => true);
    const revoked = await call(ctx.server.url, "POST", `/v1/delegations/${viewer.delegationId}/revoke`, {
      token: ctx.root.token,
      body: {},
    });
    expect(revoked.status).toBeLessThan(300);
    await call(ctx.server.url, "POST", `/v1/agents/${agentId}/invoke`, { token: ctx.root.token, body: {} });
    const ended = await stream.until((v) => v.error !== undefined);
    expect(ended.error).toBeDefined();
    expect(stream.values.filter((v: any) => v.data?.length > 0)).toEqual([]);
    stream.close();
  }, 60_000);

  it("a change is announced once its transaction commits, never when it rolls back", async () => {
    const heard: Change[] = [];
    const stop = await subscribeChanges("test-channel", (c) => heard.push(c));
    const db = await database();
    await db
      .writeTx(async (tx) => {
        notifyChange(tx, { channel: "test-channel", org: "did:org:a", id: "rolled-back" });
        throw new Error("roll back");
      })
      .catch(() => undefined);
    await db.writeTx(async (tx) => {
      notifyChange(tx, { channel: "test-channel", org: "did:org:a", id: "committed" });
      notifyChange(tx, { channel: "test-channel", org: "did:org:a", id: "committed" });
      // Not yet: the transaction is still open.
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toEqual([]);
    });
    await expect.poll(() => heard.map((c) => c.id), { timeout: 10_000 }).toEqual(["committed"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.map((c) => c.id)).toEqual(["committed"]);
    stop();
  });
  // Issue 27, item 1: the LISTEN connection retried once after 1 s and then gave up, so an open
  // stream went stale without a word after any outage longer than that. Only PostgreSQL has it.
  if (process.env.SVC_TEST_ENGINE === "postgres")
    it("the LISTEN connection comes back after an outage of several seconds, and subscribers resync", async () => {
      const heard: Change[] = [];
      let resyncs = 0;
      const stop = await subscribeChanges(
        "outage-channel",
        (c) => heard.push(c),
        () => resyncs++,
      );
      const url = new URL(process.env.DATABASE_URL!);
      const name = url.pathname.slice(1);
      const admin = new pg.Client({
        connectionString: process.env.TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres",
      });
      await admin.connect();
      try {
        // The outage: the database refuses connections for 4 s, and the LISTEN backend is ended.
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
        const ended = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query = 'LISTEN svc_changes'`,
          [name],
        );
        expect(ended.rowCount).toBe(1);
        await new Promise((r) => setTimeout(r, 4_000));
      } finally {
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
        await admin.end();
      }
      await expect.poll(() => resyncs, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
      publish({ channel: "outage-channel", org: "did:org:a", id: "after-the-outage" });
      await expect.poll(() => heard.map((c) => c.id), { timeout: 10_000 }).toContain("after-the-outage");
      stop();
    }, 60_000);
});
