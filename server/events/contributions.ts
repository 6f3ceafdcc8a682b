import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

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
} satisfies Contributions;
