import { z } from "zod";
import { ListQuery } from "../http/cursor";
import { adminProcedure, orgProcedure, router } from "../trpc/init";
import { getDelegation, listDelegations, listRevocations } from "./delegations";
import { issueDelegation, sessionResponse } from "./issueDelegation";
import { matchCapabilities } from "./matchCapabilities";
import { getPassport, listPassports, updatePassport } from "./passports";
import { registerPassport } from "./registerPassport";
import { revokeDelegation } from "./revokeDelegation";
import * as s from "./schemas";

/** The console's identity procedures: the same services and schemas as the /v1 identity routes. */
const read = (resourceType: string, capability: string) => orgProcedure.meta({ capability, resourceType });
const write = (resourceType: string, capability: string) => adminProcedure.meta({ capability, resourceType });

export const identityRouter = router({
  passports: router({
    list: read("passport", "svc_api:passports:read")
      .input(ListQuery.extend(s.PassportListQuery.shape))
      .query(({ ctx, input }) => listPassports(ctx.scope.db, ctx.scope.principal, input, ctx.scope.secret)),
    get: read("passport", "svc_api:passports:read")
      .input(s.DidParams)
      .query(({ ctx, input }) => {
        ctx.scope.setResource(input.did);
        return getPassport(ctx.scope.db, ctx.scope.principal, input.did);
      }),
    register: write("passport", "svc_api:passports:write")
      .input(s.CreatePassportRequest)
      .mutation(async ({ ctx, input }) => {
        const passport = await registerPassport(ctx.scope.db, ctx.scope.principal, input);
        ctx.scope.setResource(passport.did);
        return passport;
      }),
    update: write("passport", "svc_api:passports:write")
      .input(s.UpdatePassportRequest.extend({ did: s.DidParams.shape.did }))
      .mutation(({ ctx, input: { did, ...patch } }) => {
        ctx.scope.setResource(did);
        return updatePassport(ctx.scope.db, ctx.scope.principal, did, patch);
      }),
  }),
  delegations: router({
    list: read("delegation", "svc_api:delegations:read")
      .input(ListQuery.extend(s.DelegationListQuery.shape))
      .query(({ ctx, input }) => listDelegations(ctx.scope.db, ctx.scope.principal, input, ctx.scope.secret)),
    get: read("delegation", "svc_api:delegations:read")
      .input(s.IdParams)
      .query(({ ctx, input }) => {
        ctx.scope.setResource(input.id);
        return getDelegation(ctx.scope.db, ctx.scope.principal, input.id);
      }),
    issue: write("delegation", "svc_api:delegations:write")
      .input(s.DelegationTokenRequest.extend({ kind: z.enum(["api_key", "delegation_token"]).default("delegation_token"), name: z.string().max(200).optional() }))
      .mutation(async ({ ctx, input }) => {
        const issued = await issueDelegation(ctx.scope.db, ctx.scope.principal, {
          delegateDid: input.delegate_did,
          capabilities: [...new Set(input.capabilities)],
          durationSeconds: input.duration_seconds,
          environment: input.environment ?? null,
          kind: input.kind,
          name: input.name ?? null,
        });
        ctx.scope.setResource(issued.row.id);
        return sessionResponse(issued);
      }),
    revoke: write("delegation", "svc_api:delegations:write")
      .input(s.IdParams.extend({ reason: z.string().max(1000).optional() }))
      .mutation(({ ctx, input }) => {
        ctx.scope.setResource(input.id);
        return revokeDelegation(ctx.scope.db, ctx.scope.principal, input.id, { reason: input.reason });
      }),
  }),
  apiKeys: router({
    create: write("delegation", "svc_api:delegations:write")
      .input(z.object({ name: z.string().trim().min(1).max(200), capabilities: z.array(s.DelegationTokenRequest.shape.capabilities.element).min(1).max(100), days: z.number().int().min(1).max(3650).default(90) }).strict())
      .mutation(async ({ ctx, input }) => {
        const { principal, db } = ctx.scope;
        const issued = await issueDelegation(db, principal, {
          delegateDid: principal.orgDid,
          capabilities: [...new Set(input.capabilities)],
          durationSeconds: input.days * 86_400,
          kind: "api_key",
          name: input.name,
          detached: true,
        });
        ctx.scope.setResource(issued.row.id);
        return { ...sessionResponse(issued), name: input.name };
      }),
  }),
  revocations: router({
    list: read("revocation", "svc_api:delegations:read")
      .input(ListQuery)
      .query(({ ctx, input }) => listRevocations(ctx.scope.db, ctx.scope.principal, input, ctx.scope.secret)),
  }),
  capabilities: router({
    match: read("capability_match", "svc_api:agents:read")
      .input(s.CapabilityMatchRequest)
      .query(({ ctx, input }) => matchCapabilities(ctx.scope.db, ctx.scope.principal, input.requiredCapabilities, input.agent_ids)),
  }),
});
