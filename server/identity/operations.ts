import { ListQuery } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { getDelegation, listDelegations, listRevocations } from "./delegations";
import { exchangeSession } from "./exchangeSession";
import { issueDelegation, sessionResponse } from "./issueDelegation";
import { isConsoleSession, requirePasskeyToMint } from "./passkeyStepUp";
import { matchCapabilities } from "./matchCapabilities";
import { getDelegationUsage } from "./getDelegationUsage";
import { simulateNarrowing } from "./simulateNarrowing";
import { getPassport, listPassports, updatePassport } from "./passports";
import { registerPassport } from "./registerPassport";
import { revokeDelegation } from "./revokeDelegation";
import * as s from "./schemas";

const tag = "Identity";

export const createPassportOp = defineOperation({
  id: "createPassport",
  method: "POST",
  path: "/v1/passports",
  tag,
  summary: "Register an agent or organization passport",
  description:
    "Registers a passport from a public key (JWK or did:key). The passport's DID is the did:key of the key; the service never accepts or holds a private key.",
  capability: "svc_api:passports:write",
  resourceType: "passport",
  body: s.CreatePassportRequest,
  response: s.Passport,
  successStatus: 201,
  async handler(ctx) {
    const passport = await registerPassport(ctx.db, ctx.principal, ctx.body);
    ctx.setResource(passport.did);
    return passport;
  },
});

export const listPassportsOp = defineOperation({
  id: "listPassports",
  method: "GET",
  path: "/v1/passports",
  tag,
  summary: "List the organization's passports",
  capability: "svc_api:passports:read",
  resourceType: "passport",
  query: ListQuery.extend(s.PassportListQuery.shape),
  response: s.PassportList,
  successStatus: 200,
  handler: (ctx) => listPassports(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getPassportOp = defineOperation({
  id: "getPassport",
  method: "GET",
  path: "/v1/passports/{did}",
  tag,
  summary: "Get a passport",
  capability: "svc_api:passports:read",
  resourceType: "passport",
  params: s.DidParams,
  response: s.Passport,
  successStatus: 200,
  handler: (ctx) => getPassport(ctx.db, ctx.principal, ctx.params.did),
});

export const updatePassportOp = defineOperation({
  id: "updatePassport",
  method: "PATCH",
  path: "/v1/passports/{did}",
  tag,
  summary: "Set a passport's tiers, name or description",
  capability: "svc_api:passports:write",
  resourceType: "passport",
  params: s.DidParams,
  body: s.UpdatePassportRequest,
  response: s.Passport,
  successStatus: 200,
  handler: (ctx) => updatePassport(ctx.db, ctx.principal, ctx.params.did, ctx.body),
});

export const exchangeSessionOp = defineOperation({
  id: "exchangeSession",
  method: "POST",
  path: "/v1/sessions/exchange",
  tag,
  summary: "Exchange the caller's token for a session delegation",
  description:
    "Needs only a valid token: the session can only narrow what the caller holds. Rejected with 403 when the caller's passport is below a required tier.",
  capability: null,
  resourceType: "delegation",
  body: s.SessionExchangeRequest,
  bodyOptional: true,
  response: s.SessionExchangeResponse,
  secretFields: ["token"],
  successStatus: 201,
  problems: ["tier_too_low"],
  async handler(ctx) {
    const out = await exchangeSession(ctx.db, ctx.principal, ctx.body ?? {});
    ctx.setResource(out.delegation_id);
    return out;
  },
});

export const createDelegationTokenOp = defineOperation({
  id: "createDelegationToken",
  method: "POST",
  path: "/v1/delegation-tokens",
  tag,
  summary: "Issue a delegation token to a passport",
  description:
    "Derives a delegation from the caller's: capabilities, lifetime and a reasoning `budget` can only narrow (a budget above the tightest of the caller's chain is 403).",
  capability: "svc_api:delegations:write",
  resourceType: "delegation",
  body: s.DelegationTokenRequest,
  response: s.SessionExchangeResponse,
  secretFields: ["token"],
  successStatus: 201,
  async handler(ctx) {
    const capabilities = [...new Set(ctx.body.capabilities)];
    // The console's delegations.issue runs this too: minting there is a person's act.
    await requirePasskeyToMint(ctx.db, ctx.principal, capabilities);
    const issued = await issueDelegation(ctx.db, ctx.principal, {
      delegateDid: ctx.body.delegate_did,
      capabilities,
      durationSeconds: ctx.body.duration_seconds,
      environment: ctx.body.environment ?? null,
      kind: "delegation_token",
      budget: ctx.body.budget,
      mintedByDid: isConsoleSession(ctx.principal) ? ctx.principal.actorDid : null,
      name: ctx.body.name ?? null,
    });
    ctx.setResource(issued.row.id);
    return sessionResponse(issued);
  },
});

export const listDelegationsOp = defineOperation({
  id: "listDelegations",
  method: "GET",
  path: "/v1/delegations",
  tag,
  summary: "List delegations",
  capability: "svc_api:delegations:read",
  resourceType: "delegation",
  query: ListQuery.extend(s.DelegationListQuery.shape),
  response: s.DelegationList,
  successStatus: 200,
  handler: (ctx) => listDelegations(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getDelegationOp = defineOperation({
  id: "getDelegation",
  method: "GET",
  path: "/v1/delegations/{id}",
  tag,
  summary: "Get a delegation, its ancestry and what was derived from it",
  capability: "svc_api:delegations:read",
  resourceType: "delegation",
  params: s.IdParams,
  response: s.DelegationDetail,
  successStatus: 200,
  handler: (ctx) => getDelegation(ctx.db, ctx.principal, ctx.params.id),
});

export const revokeDelegationOp = defineOperation({
  id: "revokeDelegation",
  method: "POST",
  path: "/v1/delegations/{id}/revoke",
  tag,
  summary: "Revoke a delegation and everything derived from it",
  capability: "svc_api:delegations:write",
  resourceType: "delegation",
  params: s.IdParams,
  body: s.RevokeRequest,
  bodyOptional: true,
  response: s.RevocationRecord,
  successStatus: 201,
  handler: (ctx) => revokeDelegation(ctx.db, ctx.principal, ctx.params.id, ctx.body ?? {}),
});

export const listRevocationsOp = defineOperation({
  id: "listRevocations",
  method: "GET",
  path: "/v1/revocations",
  tag,
  summary: "List revocation records",
  capability: "svc_api:delegations:read",
  resourceType: "revocation",
  query: ListQuery,
  response: s.RevocationList,
  successStatus: 200,
  handler: (ctx) => listRevocations(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const matchCapabilitiesOp = defineOperation({
  id: "matchCapabilities",
  method: "POST",
  path: "/v1/capabilities/match",
  tag,
  summary: "Find the passports whose delegations cover a set of capabilities",
  capability: "svc_api:agents:read",
  resourceType: "capability_match",
  body: s.CapabilityMatchRequest,
  response: s.CapabilityMatchResponse,
  successStatus: 200,
  handler: (ctx) => matchCapabilities(ctx.db, ctx.principal, ctx.body.requiredCapabilities, ctx.body.agent_ids),
});

export const getDelegationUsageOp = defineOperation({
  id: "getDelegationUsage",
  method: "GET",
  path: "/v1/delegations/{id}/usage",
  tag,
  summary: "What a delegation really used: calls per capability, and the capabilities it never used",
  description:
    "Per capability the delegation holds (a wildcard also expanded to the capabilities it covers that were used), the calls the gate let through and refused since `since` (default 30 days back), its derived delegations' calls included; `unused` lists the held capabilities nothing was let through under. Counted from a rollup kept as provenance records are written. Another organization's delegation is 404.",
  capability: "svc_api:delegations:read",
  resourceType: "delegation",
  params: s.IdParams,
  query: s.UsageQuery,
  response: s.DelegationUsage,
  successStatus: 200,
  handler: (ctx) => getDelegationUsage(ctx.db, ctx.principal, ctx.params.id, ctx.query.since),
});

export const simulateNarrowingOp = defineOperation({
  id: "simulateDelegationNarrowing",
  method: "POST",
  path: "/v1/delegations/{id}/simulate",
  tag,
  summary: "Replay a delegation's calls against a narrower grant",
  description:
    "The delegation's calls let through since `since` (default 30 days back; its derived delegations' included) replayed against `capabilities` with the gate's own matcher: how many the narrower grant would have refused and allowed, and up to 20 of the refused ones (newest first) with their provenance records. Changes nothing.",
  capability: "svc_api:delegations:read",
  resourceType: "delegation",
  params: s.IdParams,
  body: s.SimulateNarrowingRequest,
  response: s.SimulateNarrowingResponse,
  successStatus: 200,
  handler: (ctx) => simulateNarrowing(ctx.db, ctx.principal, ctx.params.id, ctx.body),
});

export const identityOperations = [
  createPassportOp,
  listPassportsOp,
  getPassportOp,
  updatePassportOp,
  exchangeSessionOp,
  createDelegationTokenOp,
  listDelegationsOp,
  getDelegationOp,
  revokeDelegationOp,
  getDelegationUsageOp,
  simulateNarrowingOp,
  listRevocationsOp,
  matchCapabilitiesOp,
];
