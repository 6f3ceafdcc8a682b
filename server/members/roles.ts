import { ROLES, type Role } from "../governance/roles";
import { isKnownCapability, READ_CAPABILITIES } from "../identity/capabilityCatalogue";

/**
 * Console roles and what a person's session delegation may do. Procedure tiers check the role;
 * the gate checks the capabilities, so a role can never reach past them. The roles' names are the
 * gate's (server/governance/roles.ts), re-exported for the areas that already read them here.
 */
export { ROLES, type Role };

// Every read of the catalogue (server/identity/capabilityCatalogue.ts): a new area's reads reach
// viewers without an edit here.
const READ = [...READ_CAPABILITIES];

export const ROLE_CAPABILITIES: Record<Role, string[]> = {
  admin: ["svc_api:*"],
  approver: [...READ, "svc_api:approvals:respond"],
  viewer: READ,
};

/**
 * What a person of `role` holds: the role's capabilities the service offers (no
 * `svc_api:approvals:*` before approvals exist; they join the role's grant at its next sign-in).
 */
export function roleCapabilities(role: Role): string[] {
  return ROLE_CAPABILITIES[role].filter(isKnownCapability);
}

/** How long a console session lasts. */
export const SESSION_SECONDS = 8 * 60 * 60;

/**
 * How long a member's standing grant lasts: the delegation their sessions, and the API keys they
 * create, derive from. A sign-in renews it once less than `MEMBER_GRANT_RENEW_BELOW_SECONDS` is left,
 * so a person who signs in keeps room for a key of 90 days.
 */
export const MEMBER_GRANT_SECONDS = 366 * 86_400;
export const MEMBER_GRANT_RENEW_BELOW_SECONDS = 90 * 86_400;
