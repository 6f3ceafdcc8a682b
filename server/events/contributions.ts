import type { Contributions } from "../contributions";
import type { ErrorEntry } from "../errorCatalogue";
import { capability } from "../identity/capabilityCatalogue";

/** Its own problem types (/docs/errors lists them after the shared ones). */
const errors = {
  event_depth_exceeded: {
    status: 403,
    title: "Event chain too deep",
    description:
      "An agent run emitted an event from a chain of events and the trigger runs they started that already reached SVC_EVENT_MAX_DEPTH (default 8): the emit is refused and recorded (denied), so a loop of agents triggering each other stops.",
    fix: "Break the loop: an agent should not emit an event type that (through other triggers) starts it again, or raise SVC_EVENT_MAX_DEPTH if the chain is meant to be that long.",
  },
  emit_budget_exhausted: {
    status: 403,
    title: "Emit budget exhausted",
    description:
      "An agent run already put SVC_RUN_EMIT_BUDGET events (default 100) on the bus with ctx.events.emit: further emits of this run are refused and recorded (denied). `budget` gives the limit.",
    fix: "Emit fewer events per run (batch them into one payload), or raise SVC_RUN_EMIT_BUDGET.",
  },
  event_fanout_exceeded: {
    status: 403,
    title: "Event fan-out exceeded",
    description:
      "Putting this event on the bus would start more trigger runs than SVC_EVENT_MAX_FANOUT (default 100) for one event from outside, counting every run its chain of emitted events started. The event is refused (nothing is queued) and the refusal recorded (denied); `max_fanout`, `already_started` and `would_start` give the figures.",
    fix: "Subscribe fewer agents to the event's types, have runs emit less, or raise SVC_EVENT_MAX_FANOUT.",
  },
} as const satisfies Record<string, ErrorEntry>;

declare module "../errorCatalogue" {
  // Its codes, typed for `domainError` (see AreaErrorCodes).
  interface AreaErrorCodes extends Record<keyof typeof errors, true> {}
}

/** The events area's part of the catalogues: its capabilities cover webhooks too. */
export const eventContributions = {
  capabilities: {
    areas: { events: "Events and webhooks" },
    capabilities: [
      capability("events", "read", "List events, webhooks and deliveries."),
      capability("events", "write", "Ingest and emit events; create and delete webhooks."),
    ],
  },
  nav: [{ href: "/events", label: "Events", section: "Run", icon: "Radio" }],
  errors,
} satisfies Contributions;
