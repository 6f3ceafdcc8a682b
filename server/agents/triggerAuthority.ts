import { config } from "../config";
import { sqlIn, type Db } from "../db/client";
import { sqliteTimestamp } from "../db/raw";
import type { Principal } from "../governance/principal";
import { delegationPrincipal, principalOfDelegationRow, type DelegationRow } from "../identity/authenticate";
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
 * bus's transaction; undefined when it, or a delegation it derives from, is revoked, expired or
 * gone (the trigger then starts nothing, and the event still records the match). One raw query
 * on the ingest hot path: the delegation and whether its ancestry (split in SQL) holds one that ended.
 */
export async function triggerPrincipal(tx: Db, delegationId: string): Promise<Principal | undefined> {
  const engine = config().engine;
  const now = new Date();
  const ancestors =
    engine === "postgresql"
      ? `x."id" = ANY(string_to_array(d."ancestry", ' '))`
      : // Ids are generated (no quotes or spaces), so the space-separated ancestry is a JSON array once quoted.
        `x."id" IN (SELECT "value" FROM json_each('["' || replace(d."ancestry", ' ', '","') || '"]'))`;
  const [row] = await sqlIn(tx, engine).query<DelegationRow & { ancestor_ended: unknown }>(
    `SELECT d."id", d."org_did", d."delegate_did", d."grantor_did", d."capabilities", d."environment", d."risk_level", d."kind",
            d."expires_at", d."ancestry",
            EXISTS (SELECT 1 FROM "delegation" x WHERE ${ancestors} AND (x."revoked_at" IS NOT NULL OR x."expires_at" <= $2)) AS "ancestor_ended"
       FROM "delegation" d WHERE d."id" = $1 AND d."revoked_at" IS NULL AND d."expires_at" > $2`,
    [delegationId, engine === "sqlite" ? sqliteTimestamp(now) : now],
  );
  // SQLite answers EXISTS with 0 or 1, PostgreSQL with a boolean.
  if (!row || row.ancestor_ended === true || Number(row.ancestor_ended) === 1) return undefined;
  return principalOfDelegationRow(row);
}
