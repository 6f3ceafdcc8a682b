import { ListQuery } from "../http/cursor";
import { adminProcedure, orgProcedure, router } from "../trpc/init";
import { createOrg, getOrg, listOrgs, updateOrg } from "./orgs";
import * as s from "./schemas";

/** The console's organization procedures: the same services and schemas as /v1/cp/orgs. */
const proc = (capability: string) => orgProcedure.meta({ capability, resourceType: "organization" });
const write = (capability: string) => adminProcedure.meta({ capability, resourceType: "organization" });

export const controlPlaneRouter = router({
  orgs: router({
    list: proc("svc_api:cp:read")
      .input(ListQuery)
      .query(({ ctx, input }) => listOrgs(ctx.scope.db, ctx.scope.principal, input, ctx.scope.secret)),
    get: proc("svc_api:cp:read")
      .input(s.OrgDidParams)
      .query(({ ctx, input }) => {
        ctx.scope.setResource(input.org_did);
        return getOrg(ctx.scope.db, ctx.scope.principal, input.org_did);
      }),
    create: write("svc_api:cp:write")
      .input(s.CreateCpOrgRequest)
      .mutation(async ({ ctx, input }) => {
        const org = await createOrg(ctx.scope.db, ctx.scope.principal, input);
        ctx.scope.setResource(org.org_did);
        return org;
      }),
    update: write("svc_api:cp:write")
      .input(s.UpdateCpOrgRequest.extend({ org_did: s.OrgDidParams.shape.org_did }))
      .mutation(({ ctx, input: { org_did, ...patch } }) => {
        ctx.scope.setResource(org_did);
        return updateOrg(ctx.scope.db, ctx.scope.principal, org_did, patch);
      }),
  }),
});
