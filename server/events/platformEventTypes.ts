// Pure (no server-only imports): the console reads the catalogue too.
import { processWide } from "../processWide";
import { EVENT_TYPE_RE } from "./schemas";

/**
 * The catalogue of platform event types: the types only svc itself raises (with
 * `putPlatformEvent`). A caller's ingest, emit or `ctx.events.emit` of one of them is refused
 * (400 `RESERVED_EVENT_TYPE`), so a forged `execution.completed` can neither start a trigger run
 * nor reach a webhook. An entry is an exact type or a whole family (`agent.*`); each names the
 * capability that reads what its events carry, which a webhook subscribing to them needs (a
 * webhook delivers only what its creator may read). A later area adds its own types with
 * `reservePlatformEventTypes` (its composition-root entry), before it raises any.
 */
export interface PlatformEventEntry {
  /** An exact type (`webhook.disabled`) or a family (`agent.*`: every type under `agent.`). */
  pattern: string;
  /** The capability that reads what these events carry. */
  readCapability: string;
  /** What raises them (for the docs). */
  description: string;
}

const builtIn: PlatformEventEntry[] = [
  {
    pattern: "agent.*",
    readCapability: "svc_api:agents:read",
    description: "agents: deployed, activated, deactivated",
  },
  {
    pattern: "execution.*",
    readCapability: "svc_api:executions:read",
    description: "executions: completed, failed (the AsyncExecution, result included)",
  },
  {
    pattern: "approval.*",
    readCapability: "svc_api:approvals:read",
    description: "approvals: requested, decided, escalated, expired",
  },
  { pattern: "workflow.*", readCapability: "svc_api:workflows:read", description: "workflows: completed, failed" },
  {
    // Their payload is the proposal, `proposed` and `previous` state included: a learning reader's.
    pattern: "learning.*",
    readCapability: "svc_api:learning:read",
    description: "learning proposals: proposed, applied, rolled_back",
  },
  {
    pattern: "connector.*",
    readCapability: "svc_api:marketplace:read",
    description: "the marketplace: installed, connection_expired",
  },
  { pattern: "webhook.disabled", readCapability: "svc_api:events:read", description: "a webhook was disabled" },
  {
    pattern: "delegation.revoked",
    readCapability: "svc_api:delegations:read",
    description: "a delegation was revoked",
  },
];
const catalogue = processWide("events.platformEventCatalogue", () => [...builtIn]);

// The exact types the areas raise, as the composition root (server/areas.ts) lists them.
const raisedTypes = processWide("events.platformEventTypes", () => new Set<string>());

/** Called by the composition root only: the types the areas raise (`agent.deployed`, `execution.completed`, …). */
export function registerPlatformEventTypes(raised: Iterable<string>): void {
  for (const type of raised) raisedTypes.add(type);
}

/** Every platform event type an area registered as one it raises, sorted. */
export function registeredPlatformEventTypes(): string[] {
  return [...raisedTypes].sort();
}

/** The catalogue as it stands (the built-in entries and those later areas reserved). */
export function platformEventCatalogue(): readonly PlatformEventEntry[] {
  return catalogue;
}

/** Adds an area's platform event types to the catalogue (idempotent per pattern). */
export function reservePlatformEventTypes(entries: readonly PlatformEventEntry[]): void {
  for (const entry of entries) {
    if (!catalogue.some((e) => e.pattern === entry.pattern)) catalogue.push(entry);
  }
}

const familyOf = (pattern: string) => (pattern.endsWith(".*") ? pattern.slice(0, -1) : null);

/** The catalogue entry a type falls under, if it is a platform type. */
export function platformEventEntry(type: string): PlatformEventEntry | undefined {
  return catalogue.find((e) => {
    const family = familyOf(e.pattern);
    return family ? type.startsWith(family) : type === e.pattern;
  });
}

/** Whether only the platform may raise `type`. */
export function isReservedEventType(type: string): boolean {
  return EVENT_TYPE_RE.test(type) && (raisedTypes.has(type) || platformEventEntry(type) !== undefined);
}

/**
 * The catalogue entries a subscription pattern can match (`agent.*` and `agent.deployed` match
 * `agent.*`; `webhook.*` matches `webhook.disabled`; `invoice.*` none).
 */
export function platformEntriesMatchedBy(pattern: string): PlatformEventEntry[] {
  const mine = familyOf(pattern);
  return catalogue.filter((e) => {
    const theirs = familyOf(e.pattern);
    if (mine && theirs) return theirs.startsWith(mine) || mine.startsWith(theirs);
    if (mine) return e.pattern.startsWith(mine);
    if (theirs) return pattern.startsWith(theirs);
    return pattern === e.pattern;
  });
}
