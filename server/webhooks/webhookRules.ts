import { Forbidden } from "../errors";
import type { Principal } from "../governance/principal";
import { platformEntriesMatchedBy } from "../events/platformEventTypes";
import { coveredBy } from "../identity/capabilities";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";

/** Where a webhook may deliver: HTTPS and past the outbound guard (400 naming `target_url`). */
export const webhookTargetUrl = (raw: string) =>
  assertOutboundUrl(raw, { requireHttps: true, field: "target_url" }).toString();

/**
 * A webhook delivers only what its creator may read: subscribing to patterns (creating a webhook,
 * or adding patterns to one) needs `svc_api:events:read`, and, for patterns that match platform
 * types, the capability that reads what those events carry (`svc_api:executions:read` for
 * `execution.*`, …; see server/events/platformEventTypes.ts). 403 naming the first one missing.
 */
export function assertMayRead(
  principal: Principal,
  patterns: readonly string[],
  already: readonly string[] = [],
): void {
  const added = patterns.filter((p) => !already.includes(p));
  if (added.length === 0) return;
  const needed = [
    "svc_api:events:read",
    ...added.flatMap((p) => platformEntriesMatchedBy(p).map((e) => e.readCapability)),
  ];
  const missing = needed.find((c) => !coveredBy(principal.capabilities, c));
  if (missing) {
    const pattern = added.find((p) => platformEntriesMatchedBy(p).some((e) => e.readCapability === missing));
    throw Forbidden(
      pattern
        ? `Subscribing to ${pattern} delivers events that carry what ${missing} reads, which your delegation does not hold.`
        : `Subscribing a webhook to events needs ${missing}, which your delegation does not hold: a webhook delivers only what its creator may read.`,
      { missing_capability: missing },
    );
  }
}
