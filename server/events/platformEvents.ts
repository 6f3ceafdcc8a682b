import { database, type Database, type Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import type { PendingRecord } from "../provenance/appendProvenance";
import { requestHash } from "../provenance/record";
import { config } from "../config";
import { depthOfRun } from "./chainOfRun";
import { assertDeclaredPlatformEventType } from "./platformEventTypes";
import { putEvent, type EventAnswer } from "./putEvent";
import { subscriptionIndex } from "./matcher";
import type { EventBody } from "./schemas";
import type { z } from "zod";

/**
 * The service acting for an organization, not a caller: platform events (`webhook.disabled`,
 * `agent.deactivated`, …) raised by background work that no governed call covers. It holds no
 * delegation: a trigger it matches runs under the trigger's own authority (see
 * agents/triggerAuthority.ts); webhooks are delivered as for any event.
 */
export function servicePrincipal(orgDid: string): Principal {
  return {
    delegationId: "",
    orgDid,
    actorDid: orgDid,
    grantorDid: orgDid,
    capabilities: [],
    environment: null,
    riskLevel: "low",
    kind: "service",
    expiresAt: new Date(8.64e15),
    chain: [],
  };
}

/**
 * Puts a platform event on the organization's bus inside the caller's transaction, with a
 * provenance record of its own (operation `PLATFORM_EVENT <type>`, a service record: the
 * organization is its actor, as `servicePrincipal` says), so it is as
 * provable as an ingested one. Returns the bus's answer. `causedBy`, the execution whose end
 * raised it, puts it in that run's chain of events (its depth): an agent triggered by
 * `execution.completed` cannot start itself for ever; past SVC_EVENT_MAX_DEPTH the event is
 * not put on the bus (a zero answer). A type no area declared (server/<area>/contributions.ts)
 * throws `UndeclaredPlatformEventType` before anything is written.
 */
export async function putPlatformEvent(
  tx: Db,
  engine: Database["engine"] | undefined,
  orgDid: string,
  body: z.output<typeof EventBody>,
  causedBy?: string,
): Promise<EventAnswer> {
  assertDeclaredPlatformEventType(body.type);
  engine ??= (await database()).engine;
  let depth = 0;
  if (causedBy) {
    // Only a run that something listens to needs its depth read.
    await subscriptionIndex.refresh(tx, engine);
    if (subscriptionIndex.match(orgDid, body.type).length > 0) depth = await depthOfRun(tx, causedBy);
    if (depth >= config().eventMaxDepth)
      return { event_id: "", matched_subscriptions: 0, queued_executions: 0, replayed: false };
  }
  const hooks: Array<(tx: Db, record: PendingRecord) => Promise<void>> = [];
  let resource: string | null = null;
  const requestId = newId("req");
  const answer = await putEvent(
    {
      db: tx,
      database: { engine },
      principal: servicePrincipal(orgDid),
      requestId,
      setResource: (id) => void (resource = id),
      onRecord: (fn) => void hooks.push(fn),
    },
    body,
    "emit",
    depth,
  );
  const record = await appendServiceRecord(tx, engine, {
    org_did: orgDid,
    grantor_did: null,
    capability: null,
    operation: `PLATFORM_EVENT ${body.type}`,
    resource_type: "event",
    resource_id: resource,
    decision: "allowed",
    status: 202,
    request_hash: requestHash(body),
    request_id: requestId,
  });
  for (const fn of hooks) await fn(tx, record);
  return answer;
}
