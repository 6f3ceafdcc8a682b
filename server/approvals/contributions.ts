import type { Contributions } from "../contributions";
import { capability } from "../identity/capabilityCatalogue";

/** The approvals area's part of the catalogues. */
export const approvalContributions = {
  capabilities: {
    areas: { approvals: "Approvals" },
    capabilities: [
      capability("approvals", "read", "List and read approval requests."),
      capability("approvals", "write", "Create and cancel approval requests."),
      capability("approvals", "respond", "Approve, reject or delegate approval requests.", { decides: true }),
      capability("approvals", "admin", "Override approval decisions."),
    ],
  },
  platformEvents: [
    {
      pattern: "approval.*",
      readCapability: "svc_api:approvals:read",
      description: "approvals: requested, decided, escalated, expired",
      types: ["approval.requested", "approval.decided", "approval.escalated", "approval.expired"],
    },
  ],
  nav: [{ href: "/approvals", label: "Approvals", section: "Govern", icon: "Inbox", roles: ["admin", "approver"] }],
} satisfies Contributions;
