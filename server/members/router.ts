import { z } from "zod";
import { Forbidden, NotFound } from "../errors";
import { missingCapabilities } from "../identity/capabilities";
import { adminProcedure, orgProcedure, router } from "../trpc/init";
import { ROLE_CAPABILITIES, ROLES } from "./roles";
import { createInvite, revokeMember } from "./sessions";

/** People in the console: who am I, the members, invitations and revocation. */
export const membersRouter = router({
  me: orgProcedure.meta({ capability: null, resourceType: "member" }).query(async ({ ctx }) => {
    const { principal, db } = ctx.scope;
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
  }),
  list: orgProcedure.meta({ capability: "svc_api:members:read", resourceType: "member" }).query(async ({ ctx }) => {
    const rows = await ctx.scope.db.member.findMany({ where: { orgDid: ctx.scope.principal.orgDid }, orderBy: { createdAt: "asc" }, take: 500 });
    return rows.map((m) => ({ did: m.passportDid, display_name: m.displayName, role: m.role, status: m.status, invited_by: m.invitedBy, created_at: m.createdAt.toISOString() }));
  }),
  invite: adminProcedure
    .meta({ capability: "svc_api:members:write", resourceType: "invite" })
    .input(z.object({ role: z.enum(ROLES), hours: z.number().int().min(1).max(720).default(72) }).strict())
    .mutation(async ({ ctx, input }) => {
      // An invitation hands out the role's capabilities: only someone who holds them all may give them.
      const missing = missingCapabilities(ctx.scope.principal.capabilities, ROLE_CAPABILITIES[input.role]);
      if (missing.length > 0) throw Forbidden(`Inviting an ${input.role} needs every capability of that role; yours lack ${missing.join(", ")}.`, { missing_capabilities: missing });
      const invite = await createInvite(ctx.scope.db, ctx.scope.principal.orgDid, input.role, ctx.scope.principal.actorDid, "invite", input.hours);
      ctx.scope.setResource(invite.id);
      return invite;
    }),
  revoke: adminProcedure
    .meta({ capability: "svc_api:members:write", resourceType: "member" })
    .input(z.object({ did: z.string().min(8).max(512) }).strict())
    .mutation(async ({ ctx, input }) => {
      ctx.scope.setResource(input.did);
      const member = await revokeMember(ctx.scope.db, ctx.scope.principal, input.did);
      if (!member) throw NotFound("member", input.did);
      return { did: member.passportDid, status: member.status };
    }),
});
