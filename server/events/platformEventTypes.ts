// Pure (no server-only imports): the console's webhook forms use the matching functions, with the
// patterns their page received from the server.
import { processWide } from "../processWide";
import { EVENT_TYPE_RE } from "./schemas";

/**
 * The catalogue of platform event types: the types only svc itself raises (with
 * `putPlatformEvent`). Each area declares its own as a group (`platformEvents` in its
 * `server/<area>/contributions.ts`) and the composition root registers them
 * (`registerPlatformEventGroups`, from `composeServer`). A caller's ingest, emit or
 * `ctx.events.emit` of a type under a group's pattern is refused (400 `RESERVED_EVENT_TYPE`), so a
 * forged `execution.completed` can neither start a trigger run nor reach a webhook. A group names
 * the capability that reads what its events carry, which a webhook subscribing to them needs (a
 * webhook delivers only what its creator may read).
 *
 * It fails closed: `putPlatformEvent` raises only a type some area declared
 * (`assertDeclaredPlatformEventType` throws `UndeclaredPlatformEventType` otherwise), so an area
 * cannot raise events that reach webhooks holding only `svc_api:events:read` (learning's, once).
 */
export interface PlatformEventEntry {
  /** An exact type (`webhook.disabled`) or a family (`agent.*`: every type under `agent.`). */
  pattern: string;
  /** The capability that reads what these events carry. */
  readCapability: string;
  /** What raises them (for the docs). */
  description: string;
}

/** What an area declares: a pattern it reserves, the capability that reads it, and the exact types it raises. */
export interface PlatformEventGroup extends PlatformEventEntry {
  /** The types the area raises, each under `pattern`. */
  types: readonly string[];
}

/** Thrown where a platform event is raised whose type no area declared: a mistake of the code, not the caller's. */
export class UndeclaredPlatformEventType extends Error {
  constructor(readonly type: string) {
    super(
      `Platform event type ${JSON.stringify(type)} is declared by no area: add it to the raising area's platformEvents (server/<area>/contributions.ts).`,
    );
    this.name = "UndeclaredPlatformEventType";
  }
}

const registry = processWide("events.platformEventCatalogue", () => ({
  entries: [] as PlatformEventEntry[],
  // The exact types the areas raise, as the composition root registers them.
  raised: new Set<string>(),
}));

const familyOf = (pattern: string) => (pattern.endsWith(".*") ? pattern.slice(0, -1) : null);

/** Whether `type` falls under `pattern` (a family `agent.*` or an exact type). */
export function underPattern(type: string, pattern: string): boolean {
  const family = familyOf(pattern);
  return family ? type.startsWith(family) : type === pattern;
}

/**
 * Called by the composition root only: adds an area's groups (idempotent per pattern). A type
 * outside its group's pattern, or a pattern declared twice with another read capability, throws.
 */
export function registerPlatformEventGroups(groups: readonly PlatformEventGroup[]): void {
  for (const { types, ...entry } of groups) {
    for (const type of types)
      if (!underPattern(type, entry.pattern))
        throw new Error(`${type} is not under its group's pattern ${entry.pattern}.`);
    const known = registry.entries.find((e) => e.pattern === entry.pattern);
    if (known && known.readCapability !== entry.readCapability)
      throw new Error(`Platform event pattern ${entry.pattern} is declared twice.`);
    if (!known) registry.entries.push(entry);
    for (const type of types) registry.raised.add(type);
  }
}

/** Every platform event type an area declared as one it raises, sorted. */
export function registeredPlatformEventTypes(): string[] {
  return [...registry.raised].sort();
}

/** The catalogue as the root registered it. */
export function platformEventCatalogue(): readonly PlatformEventEntry[] {
  return registry.entries;
}

/** Throws `UndeclaredPlatformEventType` unless an area declared `type` as one it raises. */
export function assertDeclaredPlatformEventType(type: string): void {
  if (!registry.raised.has(type)) throw new UndeclaredPlatformEventType(type);
}

/** The catalogue entry a type falls under, if it is a platform type. */
export function platformEventEntry(type: string): PlatformEventEntry | undefined {
  return registry.entries.find((e) => underPattern(type, e.pattern));
}

/**
 * Whether only the platform may raise `type`: under one of `patterns` (the registered
 * catalogue's unless given; the console passes those its page received).
 */
export function isReservedEventType(
  type: string,
  patterns: readonly string[] = registry.entries.map((e) => e.pattern),
): boolean {
  return EVENT_TYPE_RE.test(type) && (registry.raised.has(type) || patterns.some((p) => underPattern(type, p)));
}

/**
 * The catalogue entries a subscription pattern can match (`agent.*` and `agent.deployed` match
 * `agent.*`; `webhook.*` matches `webhook.disabled`; `invoice.*` none).
 */
export function platformEntriesMatchedBy(pattern: string): PlatformEventEntry[] {
  const mine = familyOf(pattern);
  return registry.entries.filter((e) => {
    const theirs = familyOf(e.pattern);
    if (mine && theirs) return theirs.startsWith(mine) || mine.startsWith(theirs);
    if (mine) return e.pattern.startsWith(mine);
    if (theirs) return pattern.startsWith(theirs);
    return pattern === e.pattern;
  });
}
