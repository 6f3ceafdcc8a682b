import { config } from "../config";
import { sqlIn, type Db } from "../db/client";
import { sqliteTimestamp } from "../db/raw";
import type { Principal } from "../governance/principal";
import { delegationPrincipal } from "../identity/authenticate";
import { issueDelegation } from "../identity/issueDelegation";
import { isTriggerCapability } from "../events/schemas";
import { narrowed } from "../executions/invokeAgent";

/** A trigger's authority lasts as long as the delegation it derives from allows, at most this. */
const TRIGGER_SECONDS = 365 * 86_400;

/**
 * The authority an agent's event triggers carry: a delegation of kind `trigger` derived from the
 * person or key that deployed or activated the agent, narrowed to the manifest's grantable
 * capabilities they hold, held by them (its runs name them as grantor), and revoked with them.
 * A console session lends the person's standing grant (the session's parent), as API keys made in
 * the console do: signing out does not silence the triggers, removing the person does.
 * Returns the delegation's id.
 */
export async function issueTriggerAuthority(
  tx: Db,
  principal: Principal,
  manifestCapabilities: readonly string[],
  agentName: string,
): Promise<string> {
  const grantor =
    principal.kind === "session" && principal.chain.length >= 2
      ? await delegationPrincipal(tx, principal.chain[principal.chain.length - 2]!)
      : principal;
  const issued = await issueDelegation(tx, grantor, {
    kind: "trigger",
    delegateDid: grantor.actorDid,
    capabilities: narrowed(
      manifestCapabilities.filter((c) => !isTriggerCapability(c)),
      grantor.capabilities,
    ),
    defaultSeconds: TRIGGER_SECONDS,
    name: `triggers of ${agentName}`,
  });
  return issued.row.id;
}

/**
 * The principal a trigger run is invoked by: the subscription's trigger delegation, read in the
 * bus's transaction; undefined when it is revoked, expired or gone (the trigger then starts
 * nothing, and the event still records the match).
 */
export async function triggerPrincipal(tx: Db, delegationId: string): Promise<Principal | undefined> {
  try {
    const principal = await delegationPrincipal(tx, delegationId);
    if (principal.chain.length > 1) {
      const engine = config().engine;
      const ancestors = principal.chain.slice(0, -1);
      const now = new Date();
      const [ended] = await sqlIn(tx, engine).query<{ id: string }>(
        `SELECT "id" FROM "delegation" WHERE "id" IN (${ancestors.map((_, i) => `$${i + 2}`).join(",")})
           AND ("revoked_at" IS NOT NULL OR "expires_at" <= $1) LIMIT 1`,
        [engine === "sqlite" ? sqliteTimestamp(now) : now, ...ancestors],
      );
      if (ended) return undefined;
    }
    return principal;
  } catch {
    return undefined;
  }
}
