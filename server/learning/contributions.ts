import type { Contributions } from "../contributions";
import type { ErrorEntry } from "../errorCatalogue";
import { capability } from "../identity/capabilityCatalogue";

/** Its own problem types (/docs/errors lists them after the shared ones). */
const errors = {
  learning_target_changed: {
    status: 409,
    title: "Learning target changed",
    description:
      "A learning proposal is applied only while its target is still in the proposal's `previous` state, and rolled back only while it is still in the applied state: something else changed it since. The problem carries `current` and `expected`.",
    fix: "Read the target's state; make a new proposal from it if the change is still wanted.",
  },
} as const satisfies Record<string, ErrorEntry>;

declare module "../errorCatalogue" {
  // Its codes, typed for `domainError` (see AreaErrorCodes).
  interface AreaErrorCodes extends Record<keyof typeof errors, true> {}
}

/** The learning area's part of the catalogues. */
export const learningContributions = {
  capabilities: {
    areas: { learning: "Learning" },
    capabilities: [
      capability("learning", "read", "List and read learning proposals."),
      capability("learning", "propose", "Propose learning changes."),
      capability("learning", "decide", "Approve, reject, apply and roll back learning proposals.", { decides: true }),
    ],
  },
  platformEvents: [
    {
      // Their payload is the proposal, `proposed` and `previous` state included: a learning reader's.
      pattern: "learning.*",
      readCapability: "svc_api:learning:read",
      description: "learning proposals: proposed, applied, rolled_back",
      types: ["learning.proposed", "learning.applied", "learning.rolled_back"],
    },
  ],
  nav: [{ href: "/learning", label: "Learning", section: "Models", icon: "GraduationCap" }],
  errors,
} satisfies Contributions;
