import { ROLES } from "../members/roles";
import { defineConsoleProcedure } from "../trpc/procedures";
import { addProvider } from "./addProvider";
import { listProviderViews } from "./listProviderViews";
import { listRoutingRules } from "./listRoutingRules";
import { removeRoutingRule } from "./removeRoutingRule";
import { setRoutingRule } from "./setRoutingRule";
import { removeProvider } from "./removeProvider";
import { spendByDelegation, spendByEntity } from "./spend";
import * as s from "./schemas";

/** What the console's reasoning pages need that /v1 does not offer a token. */

export const listProvidersProcedure = defineConsoleProcedure({
  summary: "The model providers the organization's calls may use (environment and console), keys never shown",
  roles: ROLES,
  capability: "svc_api:models:read",
  resourceType: "model_provider",
  response: s.ProviderList,
  handler: (ctx) => listProviderViews(ctx.db, ctx.principal),
});

export const addProviderProcedure = defineConsoleProcedure({
  summary: "Add a model provider for the organization",
  roles: ["admin"],
  capability: "svc_api:models:admin",
  resourceType: "model_provider",
  input: s.ProviderAddRequest,
  response: s.ProviderView,
  async handler(ctx) {
    const added = await addProvider(ctx.db, ctx.principal, ctx.input);
    ctx.setResource(added.id);
    return added;
  },
});

export const removeProviderProcedure = defineConsoleProcedure({
  summary: "Remove one of the organization's console providers",
  roles: ["admin"],
  capability: "svc_api:models:admin",
  resourceType: "model_provider",
  input: s.ProviderIdInput,
  response: s.ProviderRemoved,
  async handler(ctx) {
    ctx.setResource(ctx.input.id);
    return removeProvider(ctx.db, ctx.principal, ctx.input.id);
  },
});

export const spendByDelegationProcedure = defineConsoleProcedure({
  summary: "What reasoning calls cost per delegation, with each budget and what it leaves",
  roles: ROLES,
  capability: "svc_api:models:read",
  resourceType: "reasoning_call",
  input: s.SpendQuery,
  response: s.DelegationSpendList,
  handler: (ctx) => spendByDelegation(ctx.db, ctx.principal, ctx.input.since),
});

export const spendByEntityProcedure = defineConsoleProcedure({
  summary: "What reasoning calls cost per entity (entity_id)",
  roles: ROLES,
  capability: "svc_api:models:read",
  resourceType: "reasoning_call",
  input: s.SpendQuery,
  response: s.EntitySpendList,
  handler: (ctx) => spendByEntity(ctx.db, ctx.principal, ctx.input.since),
});

export const listRoutingRulesProcedure = defineConsoleProcedure({
  summary: "The organization's routing rules (a preferred model per task and complexity)",
  roles: ROLES,
  capability: "svc_api:models:read",
  resourceType: "routing_rule",
  response: s.RoutingRuleList,
  handler: (ctx) => listRoutingRules(ctx.db, ctx.principal),
});

export const setRoutingRuleProcedure = defineConsoleProcedure({
  summary: "Set the routing rule of a task (and complexity)",
  roles: ["admin"],
  capability: "svc_api:models:admin",
  resourceType: "routing_rule",
  input: s.RoutingRuleSetRequest,
  response: s.RoutingRuleSet,
  async handler(ctx) {
    ctx.setResource(ctx.input.target);
    return setRoutingRule(ctx.db, ctx.principal, ctx.input);
  },
});

export const removeRoutingRuleProcedure = defineConsoleProcedure({
  summary: "Remove the routing rule of a task (and complexity)",
  roles: ["admin"],
  capability: "svc_api:models:admin",
  resourceType: "routing_rule",
  input: s.RoutingRuleTargetInput,
  response: s.RoutingRuleRemoved,
  async handler(ctx) {
    ctx.setResource(ctx.input.target);
    return removeRoutingRule(ctx.db, ctx.principal, ctx.input.target);
  },
});
