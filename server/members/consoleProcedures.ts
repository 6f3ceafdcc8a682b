import { z } from "zod";
import { Forbidden, NotFound } from "../errors";
import { missingCapabilities } from "../identity/capabilities";
import { defineConsoleProcedure } from "../trpc/procedures";
import { describeMe, listMembers } from "./members";
import { roleCapabilities, ROLES } from "./roles";
import * as s from "./schemas";
import { createInvite, revokeMember } from "./sessions";

/** People in the console: who am I, the members, invitations and revocation. No /v1 route has these. */
export const meProcedure = defineConsoleProcedure({
  summary: "The signed-in person",
  roles: ROLES,
  capability: null,
  resourceType: "member",
  response: s.Me,
  handler: (ctx) => describeMe(ctx.db, ctx.principal),
});

export const listMembersProcedure = defineConsoleProcedure({
  summary: "The organization's people",
  roles: ROLES,
  capability: "svc_api:members:read",
  resourceType: "member",
  response: z.array(s.MemberView),
  handler: (ctx) => listMembers(ctx.db, ctx.principal),
});

export const inviteProcedure = defineConsoleProcedure({
  summary: "A single-use invitation link for a role",
  roles: ["admin"],
  capability: "svc_api:members:write",
  resourceType: "invite",
  input: s.InviteRequest,
  response: s.InviteLink,
  async handler(ctx) {
    // An invitation hands out the role's capabilities: only someone who holds them all may give them.
    const missing = missingCapabilities(ctx.principal.capabilities, roleCapabilities(ctx.input.role));
    if (missing.length > 0)
      throw Forbidden(
        `Inviting an ${ctx.input.role} needs every capability of that role; yours lack ${missing.join(", ")}.`,
        { missing_capabilities: missing },
      );
    const invite = await createInvite(
      ctx.db,
      ctx.principal.orgDid,
      ctx.input.role,
      ctx.principal.actorDid,
      "invite",
      ctx.input.hours,
    );
    ctx.setResource(invite.id);
    return invite;
  },
});

export const revokeMemberProcedure = defineConsoleProcedure({
  summary: "Revoke a person: their membership, standing grant, sessions and the keys derived from them",
  roles: ["admin"],
  capability: "svc_api:members:write",
  resourceType: "member",
  input: s.RevokeMemberRequest,
  response: s.MemberRevoked,
  async handler(ctx) {
    ctx.setResource(ctx.input.did);
    const member = await revokeMember(ctx.db, ctx.principal, ctx.input.did);
    if (!member) throw NotFound("member", ctx.input.did);
    return { did: member.passportDid, status: member.status };
  },
});
