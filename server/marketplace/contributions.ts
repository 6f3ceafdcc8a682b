import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The marketplace's part of the catalogues. */
export const marketplaceContributions = {
  capabilities: {
    areas: { marketplace: "Marketplace" },
    capabilities: [
      capability("marketplace", "read", "Browse connectors, installations and ratings."),
      capability("marketplace", "install", "Install, update and uninstall connectors."),
      capability("marketplace", "rate", "Rate connectors."),
      capability("marketplace", "invoke", "Invoke installed connectors."),
    ],
  },
  platformEvents: [
    {
      pattern: "connector.*",
      readCapability: "svc_api:marketplace:read",
      description: "the marketplace: installed, connection_expired",
      types: ["connector.installed", "connector.connection_expired"],
    },
  ],
  nav: [{ href: "/marketplace", label: "Marketplace", section: "Connect", icon: "Store" }],
} satisfies Contributions;
