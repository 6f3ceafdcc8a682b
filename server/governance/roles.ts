/**
 * The console's roles. The gate checks a procedure's roles (governCall), so their names belong to
 * the kernel; what each role may do is the members area's (server/members/roles.ts).
 */
export const ROLES = ["admin", "approver", "viewer"] as const;
export type Role = (typeof ROLES)[number];
