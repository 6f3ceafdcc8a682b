import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The console members' part of the catalogues. */
export const memberContributions = {
  capabilities: {
    areas: { members: "Console members" },
    capabilities: [
      capability("members", "read", "List the console's members (people)."),
      capability("members", "write", "Invite people to the console and revoke their access."),
    ],
  },
  nav: [{ href: "/members", label: "Members", section: "Govern", icon: "Users", roles: ["admin"] }],
} satisfies Contributions;
