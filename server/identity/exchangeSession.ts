import type { z } from "zod";
import type { Db } from "../db/client";
import { ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { SESSION_DEFAULT_CAPABILITIES } from "./capabilities";
import { isKnownCapability } from "./capabilityCatalogue";
import { issueDelegation, sessionResponse, tierTooLow } from "./issueDelegation";
import { isConsoleSession, requirePasskeyToMint } from "./passkeyStepUp";
import type { SessionExchangeRequest } from "./schemas";

/**
 * The session exchange: trades the caller's token for a narrower, shorter session delegation of
 * the same actor. Rejected (403, naming the tier) when the actor's passport is below a required
 * verification or identity tier.
 */
export async function exchangeSession(db: Db, principal: Principal, input: z.output<typeof SessionExchangeRequest>) {
  if (input.capabilities?.length && input.scopes?.length) {
    const a = [...new Set(input.capabilities)].sort().join(" ");
    const b = [...new Set(input.scopes)].sort().join(" ");
    if (a !== b)
      throw ValidationFailed([
        {
          field: "scopes",
          code: "INVALID_VALUE",
          message: "scopes is an alias of capabilities: send one of them, or the same list in both.",
        },
      ]);
  }
  // The default grants what of it the service offers (no reasoning before the reasoning area exists).
  const requested = input.capabilities?.length
    ? input.capabilities
    : input.scopes?.length
      ? input.scopes
      : SESSION_DEFAULT_CAPABILITIES.filter(isKnownCapability);
  const passport = await db.passport.findFirst({ where: { did: principal.actorDid, orgDid: principal.orgDid } });
  const verification = passport?.verificationTier ?? 0;
  const identity = passport?.identityTier ?? 0;
  if (input.required_verification_tier !== undefined && verification < input.required_verification_tier) {
    throw tierTooLow("verification", verification, input.required_verification_tier);
  }
  if (input.required_identity_tier !== undefined && identity < input.required_identity_tier) {
    throw tierTooLow("identity", identity, input.required_identity_tier);
  }
  // Drawn from a console session, the token leaves the browser: like a key, it may then mint
  // delegation tokens that decide through /v1, so it needs the same passkey step-up.
  await requirePasskeyToMint(db, principal, requested);
  const issued = await issueDelegation(db, principal, {
    delegateDid: principal.actorDid,
    capabilities: [...new Set(requested)],
    durationSeconds: input.duration_seconds,
    defaultSeconds: 86_400,
    environment: input.environment ?? null,
    riskLevel: input.risk_level ?? "standard",
    kind: "session",
    budget: input.budget,
    mintedByDid: isConsoleSession(principal) ? principal.actorDid : null,
  });
  return sessionResponse({ ...issued, delegate: passport });
}
