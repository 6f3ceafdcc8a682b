import { processWide } from "../processWide";

// The platform event types the areas raise, as the composition root (server/areas.ts) lists them.
const types = processWide("events.platformEventTypes", () => new Set<string>());

/** Called by the composition root only: the types the areas raise (`agent.deployed`, `execution.completed`, …). */
export function registerPlatformEventTypes(raised: Iterable<string>): void {
  for (const type of raised) types.add(type);
}

/** Whether `type` is one the platform raises itself (callers must not put it on the bus). */
export function isPlatformEventType(type: string): boolean {
  return types.has(type);
}

/** Every registered platform event type, sorted. */
export function registeredPlatformEventTypes(): string[] {
  return [...types].sort();
}
