import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";

/** The signed-in person as the console shows them: who, in which organization, with which role. */
export async function describeMe(db: Db, principal: Principal) {
  const member = await db.member.findUnique({ where: { passportDid: principal.actorDid } });
  const org = await db.organization.findUnique({ where: { orgDid: principal.orgDid } });
  return {
    did: principal.actorDid,
    org_did: principal.orgDid,
    org_name: org?.name ?? principal.orgDid,
    role: principal.role ?? null,
    display_name: member?.displayName ?? null,
    capabilities: principal.capabilities,
    session_expires_at: principal.expiresAt.toISOString(),
  };
}

/** The caller's organization's people, oldest first (an organization has few). */
export async function listMembers(db: Db, principal: Principal) {
  const rows = await db.member.findMany({
    where: { orgDid: principal.orgDid },
    orderBy: { createdAt: "asc" },
    take: 500,
  });
  return rows.map((m) => ({
    did: m.passportDid,
    display_name: m.displayName,
    role: m.role,
    status: m.status,
    invited_by: m.invitedBy,
    created_at: m.createdAt.toISOString(),
  }));
}
