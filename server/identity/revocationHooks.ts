import type { Db } from "../db/client";
import { processWide } from "../processWide";

/**
 * What other areas do, in the revoking transaction, when delegations are revoked (executions
 * cancel the runs that act under them). Identity never imports those areas: the composition root
 * (server/areas.ts) registers their hooks here.
 */
export type RevocationHook = (tx: Db, revokedIds: readonly string[]) => Promise<void>;

// Shared by every copy of this module in the process (Next.js's bundle and the server's own modules).
const hooks = processWide("identity.revocationHooks", () => new Map<string, RevocationHook>());

/** Registers (or, with the same name, replaces) a hook run by every revocation. */
export function onDelegationsRevoked(name: string, hook: RevocationHook): void {
  hooks.set(name, hook);
}

export async function runRevocationHooks(tx: Db, revokedIds: readonly string[]): Promise<void> {
  for (const hook of hooks.values()) await hook(tx, revokedIds);
}
