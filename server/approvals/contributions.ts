import type { Contributions } from "../contributions";
import type { ErrorEntry } from "../errorCatalogue";
import { capability } from "../identity/capabilityCatalogue";

/** Its own problem types (/docs/errors lists them after the shared ones). */
const errors = {
  approval_step_up_required: {
    status: 403,
    title: "Step-up required",
    description:
      "A decision on a high or critical approval request needs a step-up (`step_up` says which): in the console a passkey assertion with user verification made in the deciding session (its sign-in) at most 5 minutes ago; through /v1 a delegation that was not issued to an agent passport.",
    fix: "In the console, confirm with your passkey and decide again; through the API, decide with a person's or the organization's delegation holding svc_api:approvals:respond.",
  },
  approval_params_mismatch: {
    status: 403,
    title: "Parameters differ from the approved ones",
    description:
      "A call made under an approval's grant carried parameters whose canonical SHA-256 differs from the hash the decision approved (`expected_hash`, `received_hash`). The refusal is recorded.",
    fix: "Send exactly the approved parameters (the decision's modified_params, or the request_data when approved unchanged), or ask for a new approval.",
  },
} as const satisfies Record<string, ErrorEntry>;

declare module "../errorCatalogue" {
  // Its codes, typed for `domainError` (see AreaErrorCodes).
  interface AreaErrorCodes extends Record<keyof typeof errors, true> {}
}

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
  errors,
} satisfies Contributions;
