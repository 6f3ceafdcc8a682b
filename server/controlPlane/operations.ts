import { ListQuery } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { createOrg } from "./createOrg";
import { getOrg } from "./getOrg";
import { listOrgs } from "./listOrgs";
import { updateOrg } from "./updateOrg";
import * as s from "./schemas";

const tag = "Control plane";

export const createOrgOp = defineOperation({
  id: "createCpOrg",
  method: "POST",
  path: "/v1/cp/orgs",
  tag,
  summary: "Create an organization",
  description: "Creates a tenant for an organization passport registered in the caller's organization.",
  capability: "svc_api:cp:write",
  resourceType: "organization",
  body: s.CreateCpOrgRequest,
  response: s.CpOrg,
  successStatus: 201,
  async handler(ctx) {
    const org = await createOrg(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(org.org_did);
    return org;
  },
});

export const listOrgsOp = defineOperation({
  id: "listCpOrgs",
  method: "GET",
  path: "/v1/cp/orgs",
  tag,
  summary: "List organizations: the caller's own and those it created",
  capability: "svc_api:cp:read",
  resourceType: "organization",
  query: ListQuery,
  response: s.CpOrgList,
  successStatus: 200,
  handler: (ctx) => listOrgs(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getOrgOp = defineOperation({
  id: "getCpOrg",
  method: "GET",
  path: "/v1/cp/orgs/{org_did}",
  tag,
  summary: "Get an organization",
  capability: "svc_api:cp:read",
  resourceType: "organization",
  params: s.OrgDidParams,
  response: s.CpOrg,
  successStatus: 200,
  handler: (ctx) => getOrg(ctx.db, ctx.principal, ctx.params.org_did),
});

export const updateOrgOp = defineOperation({
  id: "updateCpOrg",
  method: "PATCH",
  path: "/v1/cp/orgs/{org_did}",
  tag,
  summary: "Update an organization",
  description:
    "The caller's own organization or one it created. `deployment_mode`, `autonomy_profile` and `data_residency_tier` are decided by the organization that created it (the root organization decides its own): an organization changing its own gets 403 naming the fields. Its `name` it may change itself.",
  capability: "svc_api:cp:write",
  resourceType: "organization",
  params: s.OrgDidParams,
  body: s.UpdateCpOrgRequest,
  response: s.CpOrg,
  successStatus: 200,
  handler: (ctx) => updateOrg(ctx.db, ctx.principal, ctx.params.org_did, ctx.body),
});

export const controlPlaneOperations = [createOrgOp, listOrgsOp, getOrgOp, updateOrgOp];
