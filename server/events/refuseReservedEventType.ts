import { ValidationFailed } from "../errors";
import { platformEventEntry } from "./platformEventTypes";

/**
 * Refuses a caller's event of a platform type (ingest, emit, `ctx.events.emit`): 400 with
 * `errors[].code = "RESERVED_EVENT_TYPE"` on `type`. Only `putPlatformEvent` raises them.
 */
export function refuseReservedEventType(type: string): void {
  const entry = platformEventEntry(type);
  if (!entry) return;
  throw ValidationFailed(
    [
      {
        field: "type",
        code: "RESERVED_EVENT_TYPE",
        message: `${type} is a platform event type (${entry.pattern} is reserved: only svc raises it); use a type of your own.`,
        received: type,
      },
    ],
    "The event type is reserved for the platform.",
  );
}
