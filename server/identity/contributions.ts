import type { Contributions } from "../contributions";
import { capability } from "./capabilityCatalogue";

/** Identity's part of the catalogues: passports and delegations. */
export const identityContributions = {
  capabilities: {
    areas: { passports: "Passports", delegations: "Delegations" },
    capabilities: [
      capability("passports", "read", "List and read the organization's passports."),
      capability("passports", "write", "Register passports and change their name or description."),
      capability(
        "passports",
        "admin",
        "Set passports' verification and identity tiers, and delegate to passports of higher tiers.",
      ),
      capability("delegations", "read", "List and read delegations and revocation records."),
      capability(
        "delegations",
        "write",
        "Issue delegation tokens and revoke the caller's own delegations and those derived from them.",
      ),
      capability("delegations", "admin", "Revoke any delegation of the organization."),
    ],
  },
  platformEvents: [
    {
      pattern: "delegation.revoked",
      readCapability: "svc_api:delegations:read",
      description: "a delegation was revoked",
      types: [],
    },
  ],
  nav: [
    { href: "/passports", label: "Passports", section: "Govern", icon: "Fingerprint" },
    { href: "/keys", label: "API keys & delegations", section: "Govern", icon: "KeyRound" },
  ],
} satisfies Contributions;
