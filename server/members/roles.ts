/**
 * Console roles and what a person's session delegation may do. Procedure tiers check the role;
 * the gate checks the capabilities, so a role can never reach past them.
 */
export const ROLES = ["admin", "approver", "viewer"] as const;
export type Role = (typeof ROLES)[number];

const READ = ["members", "passports", "delegations", "provenance", "cp", "agents", "approvals", "executions", "workflows", "events", "marketplace", "compliance", "models", "prompts", "learning"].map((a) => `svc_api:${a}:read`);

export const ROLE_CAPABILITIES: Record<Role, string[]> = {
  admin: ["svc_api:*"],
  approver: [...READ, "svc_api:approvals:respond"],
  viewer: READ,
};

/** How long a console session lasts. */
export const SESSION_SECONDS = 8 * 60 * 60;
