import { defineOperation } from "../http/operation";
import { getEvent } from "./getEvent";
import { listEvents } from "./listEvents";
import { putEvent } from "./putEvent";
import { refuseReservedEventType } from "./refuseReservedEventType";
import * as s from "./schemas";

const tag = "Events";

export const ingestEventOp = defineOperation({
  id: "ingestEvent",
  method: "POST",
  path: "/v1/events/ingest",
  tag,
  summary: "Put an inbound event on the bus",
  description:
    "An event from outside (a partner, a SaaS hook). It is matched against the organization's agent triggers and webhooks; each matched trigger queues an execution, each webhook a delivery, all in this call's transaction with its provenance record. A repeated `id` answers the first answer and dispatches nothing. Platform event types (agent.*, execution.*, webhook.disabled, … see the README's event catalogue) are refused: 400 with errors[].code RESERVED_EVENT_TYPE.",
  capability: "svc_api:events:write",
  resourceType: "event",
  body: s.EventBody,
  response: s.EventAccepted,
  successStatus: 202,
  handler: (ctx) => {
    refuseReservedEventType(ctx.body.type);
    return putEvent(ctx, ctx.body, "ingest");
  },
});

export const emitEventOp = defineOperation({
  id: "emitEvent",
  method: "POST",
  path: "/v1/events/emit",
  tag,
  summary: "Put an outbound event on the bus",
  description:
    "An event from the organization's own systems; the same bus, matching and dispatch as ingest (agents emit through `ctx.events.emit`, recorded under this operation).",
  capability: "svc_api:events:write",
  resourceType: "event",
  body: s.EventBody,
  response: s.EventAccepted,
  successStatus: 202,
  handler: (ctx) => {
    refuseReservedEventType(ctx.body.type);
    return putEvent(ctx, ctx.body, "emit");
  },
});

export const listEventsOp = defineOperation({
  id: "listEvents",
  method: "GET",
  path: "/v1/events",
  tag,
  summary: "List events with what they matched",
  description:
    "Newest first; each with its matches (subscription, the execution or delivery it caused) and its provenance record and leaf index.",
  capability: "svc_api:events:read",
  resourceType: "event",
  query: s.EventListQuery,
  response: s.EventList,
  successStatus: 200,
  handler: (ctx) => listEvents(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getEventOp = defineOperation({
  id: "getEvent",
  method: "GET",
  path: "/v1/events/{id}",
  tag,
  summary: "Get an event",
  capability: "svc_api:events:read",
  resourceType: "event",
  params: s.EventIdParams,
  response: s.EventView,
  successStatus: 200,
  handler: (ctx) => getEvent(ctx.db, ctx.principal, ctx.params.id),
});

export const eventOperations = [ingestEventOp, emitEventOp, listEventsOp, getEventOp];
