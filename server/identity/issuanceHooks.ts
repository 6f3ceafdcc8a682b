import type { z } from "zod";
import type { Db } from "../db/client";
import type { Delegation } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { processWide } from "../processWide";
import type { DelegationBudget } from "./schemas";

/** What a delegation is derived from (server/identity/issueDelegation.ts); issuance hooks see it whole. */
export interface DelegationRequest {
  delegateDid: string;
  capabilities: string[];
  /** Explicit lifetime; when absent, `defaultSeconds` clamped to what the grantor has left. */
  durationSeconds?: number;
  defaultSeconds?: number;
  environment?: string | null;
  riskLevel?: string;
  kind: "api_key" | "delegation_token" | "session" | "execution" | "trigger" | "workflow";
  name?: string | null;
  /**
   * A reasoning budget of its own: it can only narrow the chain's. Reasoning attaches it through
   * its issuance hook (server/reasoning/budgets.ts).
   */
  budget?: z.output<typeof DelegationBudget>;
  /** The person minting it in a console session: what it decides counts as theirs. */
  mintedByDid?: string | null;
}

/**
 * What other areas do, in the issuing transaction, when a delegation is derived (reasoning
 * attaches the requested budget, refusing one above its chain's). Identity never imports those
 * areas: the composition root (server/areas.ts) registers their hooks here, as it does
 * revocation's (server/identity/revocationHooks.ts). A hook that throws refuses the issuance.
 */
export type IssuanceHook = (
  tx: Db,
  grantor: Principal,
  delegation: Delegation,
  request: DelegationRequest,
) => Promise<void>;

// Shared by every copy of this module in the process (Next.js's bundle and the server's own modules).
const hooks = processWide("identity.issuanceHooks", () => new Map<string, IssuanceHook>());

/** Registers (or, with the same name, replaces) a hook run by every issuance. */
export function onDelegationIssued(name: string, hook: IssuanceHook): void {
  hooks.set(name, hook);
}

export async function runIssuanceHooks(
  tx: Db,
  grantor: Principal,
  delegation: Delegation,
  request: DelegationRequest,
): Promise<void> {
  for (const hook of hooks.values()) await hook(tx, grantor, delegation, request);
}
