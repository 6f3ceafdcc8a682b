import type { Db } from "../db/client";
import { domainError } from "../errors";
import type { Principal } from "../governance/principal";
import { decidingCapabilities } from "./capabilityCatalogue";

/** How old the passkey assertion made in a console session may be for a step-up. */
export const STEP_UP_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * A console session (a person signed in to the console), not a session token drawn through
 * /v1/sessions/exchange: only the console's sessions carry the person's role.
 */
export const isConsoleSession = (principal: Principal): boolean =>
  principal.kind === "session" && principal.role !== undefined;

/**
 * Whether the caller's own session holds a passkey assertion at most 5 minutes old (its sign-in,
 * or the sign-in that replaced the one before in the same browser). Bound to the session, not to
 * the person: their sign-in in another browser does nothing for a stale or stolen cookie.
 */
export async function hasFreshPasskeyAssertion(db: Db, principal: Principal): Promise<boolean> {
  if (principal.kind !== "session") return false;
  const session = await db.delegation.findUnique({
    where: { id: principal.delegationId },
    select: { passkeyAssertedAt: true },
  });
  const at = session?.passkeyAssertedAt;
  return !!at && at.getTime() >= Date.now() - STEP_UP_MAX_AGE_MS;
}

/**
 * Minting in the console a key or token that can decide approvals (or learning proposals) needs
 * the step-up such a decision needs in the console: otherwise a session with a stale passkey
 * would mint a key and decide through /v1 what it may not decide itself. Other callers (/v1,
 * the CLI) are not asked: they hold no passkey, and their keys decide as what they are.
 */
export async function requirePasskeyToMint(db: Db, principal: Principal, capabilities: readonly string[]) {
  if (!isConsoleSession(principal)) return;
  const deciding = decidingCapabilities(capabilities);
  if (deciding.length === 0 || (await hasFreshPasskeyAssertion(db, principal))) return;
  throw domainError(
    "passkey_step_up_required",
    `${deciding.join(", ")} can decide approvals: confirm with your passkey (at most 5 minutes ago, in this session) to create a key holding ${deciding.length === 1 ? "it" : "them"}.`,
    { step_up: "passkey", capabilities: deciding },
  );
}
