import { ROLES, type Role } from "../governance/roles";
import { isKnownCapability, readCapabilities } from "../identity/capabilityCatalogue";

/**
 * Console roles and what a person's session delegation may do. Procedure tiers check the role;
 * the gate checks the capabilities, so a role can never reach past them. The roles' names are the
 * gate's (server/governance/roles.ts), re-exported for the areas that already read them here.
 */
export { ROLES, type Role };

/**
 * What each role may hold. Every read of the catalogue (server/identity/capabilityCatalogue.ts),
 * as the areas declared it: a new area's reads reach viewers without an edit here.
 */
export function roleGrants(role: Role): string[] {
  if (role === "admin") return ["svc_api:*"];
  const read = readCapabilities();
  return role === "approver" ? [...read, "svc_api:approvals:respond"] : read;
}

/**
 * What a person of `role` holds: the role's capabilities the service offers (no
 * `svc_api:approvals:*` before approvals exist; they join the role's grant at its next sign-in).
 */
export function roleCapabilities(role: Role): string[] {
  return roleGrants(role).filter(isKnownCapability);
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
