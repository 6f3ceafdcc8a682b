import { z } from "zod";
import { ListQuery, PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";

// Pure zod: the console's event pages, the webhooks area and agent manifests import these.

const Timestamp = z.string().describe("ISO 8601 date-time");

export const EVENT_TYPE_MAX = 200;
/** Dot notation: lowercase words of [a-z0-9_] joined by single dots. */
export const EVENT_TYPE_RE = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/;

export const EventType = z
  .string()
  .max(EVENT_TYPE_MAX, `An event type has at most ${EVENT_TYPE_MAX} characters.`)
  .regex(
    EVENT_TYPE_RE,
    "An event type is dot notation: lowercase words of a-z, 0-9 and _ joined by single dots, e.g. invoice.paid.",
  )
  .describe("Dot notation, e.g. invoice.paid");

/** Whether `pattern` is a subscription pattern: a type, or a type followed by `.*` (every type under that prefix). */
export function isEventPattern(pattern: string): boolean {
  if (pattern.length > EVENT_TYPE_MAX) return false;
  const base = pattern.endsWith(".*") ? pattern.slice(0, -2) : pattern;
  return EVENT_TYPE_RE.test(base);
}

export const EventPattern = z
  .string()
  .max(EVENT_TYPE_MAX, `A pattern has at most ${EVENT_TYPE_MAX} characters.`)
  .refine(
    isEventPattern,
    "A pattern is an event type (dot notation, e.g. invoice.paid), optionally ending in .* to match every type under that prefix (invoice.*).",
  )
  .describe(
    "An event type, or a prefix ending in `.*`: `invoice.*` matches invoice.paid and invoice.line.added, not invoices.x nor invoice",
  );

export const EVENT_EXAMPLE = {
  eventId: "evt_01m806mp6q2v9w3x5y7z8a0b1c",
  triggerId: "sub_01m806mp6r3b4c5d6e7f8g9h0j",
};

export const EventBody = z
  .object({
    type: EventType,
    payload: z.record(z.string(), z.unknown()).optional().describe("The event's data (a JSON object); {} when absent"),
    id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "The sender's id for this event: a repeat with the same id answers the first answer and dispatches nothing",
      ),
    source: z.string().min(1).max(200).optional().describe("Free-form origin, e.g. billing-service"),
    occurred_at: z.iso.datetime({ offset: true }).optional().describe("When it happened; defaults to now"),
  })
  .strict()
  .meta({
    id: "EventBody",
    example: {
      type: "invoice.paid",
      payload: { invoice_id: "inv_2041", amount: 1250 },
      id: "evt-billing-88121",
      source: "billing",
      occurred_at: "2026-11-21T09:30:00.000Z",
    },
  });

export const EventAccepted = z
  .object({
    event_id: z.string(),
    matched_subscriptions: z
      .number()
      .int()
      .describe("How many active subscriptions (webhooks and agent triggers) matched"),
    queued_executions: z.number().int().describe("How many agent executions it queued"),
    replayed: z
      .boolean()
      .describe(
        "true when the sender's `id` was seen before: this is the first answer again and nothing was dispatched (the answer also carries `Idempotent-Replayed: true`)",
      ),
  })
  .meta({
    id: "EventAccepted",
    example: { event_id: EVENT_EXAMPLE.eventId, matched_subscriptions: 2, queued_executions: 1, replayed: false },
  });

export const EventMatchView = z.object({
  subscription_id: z.string(),
  kind: z.enum(["webhook", "agent_trigger"]).nullable().describe("null when the subscription has since been deleted"),
  agent_id: z.string().nullable(),
  execution_id: z.string().nullable().describe("The execution a trigger queued"),
  delivery_id: z.string().nullable().describe("The webhook delivery it scheduled"),
});

const eventExample = {
  id: EVENT_EXAMPLE.eventId,
  type: "invoice.paid",
  payload: { invoice_id: "inv_2041", amount: 1250 },
  sender_id: "evt-billing-88121",
  source: "billing",
  occurred_at: "2026-11-21T09:30:00.000Z",
  via: "ingest" as const,
  actor: EXAMPLE.agentDid,
  delegation_id: EXAMPLE.delegationId,
  provenance_record_id: EXAMPLE.recordId,
  leaf_index: 4211,
  depth: 0,
  created_at: "2026-11-21T09:30:00.012Z",
  matches: [
    {
      subscription_id: EVENT_EXAMPLE.triggerId,
      kind: "agent_trigger" as const,
      agent_id: "agt_01m806mp6t3m7bq1xkz3k9r2hd",
      execution_id: "exe_01m806mp6v2d8h5qz0w3c6p9ka",
      delivery_id: null,
    },
  ],
};

export const EventView = z
  .object({
    id: z.string(),
    type: z.string(),
    payload: z.record(z.string(), z.unknown()),
    sender_id: z.string().nullable(),
    source: z.string().nullable(),
    occurred_at: Timestamp,
    via: z.enum(["ingest", "emit"]),
    actor: z.string().describe("The actor DID of the call that put it on the bus"),
    delegation_id: z.string().nullable(),
    provenance_record_id: z.string().nullable().describe("That call's provenance record"),
    leaf_index: z.number().int().nullable().describe("The record's leaf index in the ledger"),
    depth: z.number().int().describe("0 from outside; an event emitted by a run its trigger event's depth + 1"),
    created_at: Timestamp,
    matches: z.array(EventMatchView),
  })
  .meta({ id: "Event", example: eventExample });

export const EventListQuery = ListQuery.extend({
  type: EventType.optional().describe("Only events of this type"),
});

export const EventList = z
  .object({ data: z.array(EventView), pagination: PaginationInfo })
  .meta({ id: "EventList", example: { data: [eventExample], pagination: { has_more: false, next_cursor: null } } });

export const EventIdParams = z.object({ id: z.string().min(1).max(100) });

/** A manifest's `on` entry. */
export const TriggerEntry = z.object({ event: EventPattern, description: z.string().max(500) });

/**
 * Trigger capabilities are declarations of a manifest, not grants: `event_trigger` (the agent may
 * be started by events) and `event_trigger:<pattern>` (by this `on` entry). They are never part of
 * a delegation and never checked against the deployer; a trigger run's authority comes from the
 * delegation of whoever put the event on the bus (see server/events/triggers.ts).
 */
export const TRIGGER_CAPABILITY = "event_trigger";

export function isTriggerCapability(id: string): boolean {
  return id === TRIGGER_CAPABILITY || id.startsWith(`${TRIGGER_CAPABILITY}:`);
}
