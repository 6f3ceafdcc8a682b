import type { Db } from "../db/client";
import type { Event, Subscription } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { processWide } from "../processWide";

/** What a matched subscription caused: the execution a trigger queued, or the delivery a webhook scheduled. */
export interface DispatchOutcome {
  executionId?: string;
  deliveryId?: string;
}

export interface DispatchContext {
  /** The event, its provenance record id and leaf index already filled in. */
  event: Event;
  subscription: Subscription;
  /** The caller that put the event on the bus (ingest, emit, or a run's `ctx.events.emit`). */
  principal: Principal;
}

/**
 * Runs in the ingesting call's transaction, after its provenance record: what it writes (an
 * execution and its job, a delivery and its job) commits with the event or not at all.
 */
export type SubscriptionDispatcher = (tx: Db, ctx: DispatchContext) => Promise<DispatchOutcome | void>;

const dispatchers = processWide("events.subscriptionDispatchers", () => new Map<string, SubscriptionDispatcher>());

/**
 * Declares what a match of a subscription kind does: the composition root (server/areas.ts)
 * registers the events area's `agent_trigger` and the webhooks area's `webhook`. A kind with no dispatcher in this process is still matched and
 * recorded (`event_match` without an execution or delivery).
 */
export function registerSubscriptionDispatcher(
  kind: "webhook" | "agent_trigger",
  dispatcher: SubscriptionDispatcher,
): () => void {
  dispatchers.set(kind, dispatcher);
  return () => {
    if (dispatchers.get(kind) === dispatcher) dispatchers.delete(kind);
  };
}

export function dispatcherFor(kind: string): SubscriptionDispatcher | undefined {
  return dispatchers.get(kind);
}
