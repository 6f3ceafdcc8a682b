import { defineConsoleProcedure } from "../trpc/procedures";
import { createConsoleApiKey } from "./createApiKey";
import * as s from "./schemas";

/** What the console's identity pages need that /v1 does not offer a token. */
export const createApiKeyProcedure = defineConsoleProcedure({
  summary: "Create an API key of the organization, derived from the signed-in administrator's standing grant",
  roles: ["admin"],
  capability: "svc_api:delegations:write",
  resourceType: "delegation",
  input: s.CreateApiKeyRequest,
  response: s.ApiKeyCreated,
  async handler(ctx) {
    const key = await createConsoleApiKey(ctx.db, ctx.principal, ctx.input);
    ctx.setResource(key.delegation_id);
    return key;
  },
});
