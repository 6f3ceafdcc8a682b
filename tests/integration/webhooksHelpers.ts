import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { database } from "@/server/db/client";
import { newId } from "@/server/ids";
import { appendInTransaction, awaitIntegrated } from "@/server/provenance/appendProvenance";
import { requestHash } from "@/server/provenance/record";
import { scheduleDelivery } from "@/server/webhooks/deliveryJob";

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A loopback receiver: `answer(path, n)` (n counts the requests to that path, from 1) gives the
 * status to answer with, or "hang" to never answer; each answer waits `delayMs`.
 */
export async function startReceiver(
  answer: (path: string, n: number) => number | "hang" | { status: number; location: string },
  delayMs = 0,
) {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      const path = req.url ?? "/";
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      received.push({ path, headers: req.headers, body, at: Date.now() });
      const a = answer(path, n);
      if (a === "hang") return;
      if (typeof a === "object") res.writeHead(a.status, { location: a.location }).end();
      else res.writeHead(a, { "content-type": "text/plain" }).end(`answer ${a} to ${path} #${n} ${"x".repeat(2000)}`);
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hostPort: `127.0.0.1:${port}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Puts an event on the bus the way the events area's ingest does (event, its provenance record
 * and its matches' jobs in one transaction), addressed to the given webhooks.
 */
export async function putEvent(
  orgDid: string,
  webhookIds: string[],
  type = "invoice.paid",
  payload: Record<string, string | number> = { invoice_id: "inv_1" },
) {
  const db = await database();
  const made = await db.writeTx(async (tx) => {
    const id = newId("evt");
    const record = await appendInTransaction(tx, db.engine, {
      org_did: orgDid,
      actor_did: orgDid,
      delegation_id: null,
      grantor_did: orgDid,
      capability: "svc_api:events:write",
      operation: "POST /v1/events/ingest",
      resource_type: "event",
      resource_id: id,
      decision: "allowed",
      status: 202,
      request_hash: requestHash({ type, payload }),
      request_id: newId("req"),
    });
    const event = await tx.event.create({
      data: {
        id,
        orgDid,
        type,
        payload,
        occurredAt: new Date(),
        ingestedVia: "ingest",
        actorDid: orgDid,
        provenanceId: record.id,
        provenanceSeq: null,
        requestId: record.request_id,
        answer: { event_id: id, matched_subscriptions: webhookIds.length, queued_executions: 0 },
      },
    });
    for (const subscriptionId of webhookIds) {
      await tx.eventMatch.create({ data: { eventId: id, subscriptionId } });
      await scheduleDelivery(tx, event, { id: subscriptionId, orgDid });
    }
    return { id, recordId: record.id };
  });
  // As the gate does after commit: the record gets its leaf index from the integrator.
  await awaitIntegrated(db, [made.recordId]);
  const seq = Number((await db.read.provenanceRecord.findUniqueOrThrow({ where: { id: made.recordId } })).seq);
  return { ...made, seq };
}
