import { z } from "zod";
import { countPassports } from "../identity/passports";
import { ledgerIdentity } from "../ledger/origin";
import { inclusionProof, ledgerSync } from "../ledger/proofs";
import { ROLES } from "../governance/roles";
import { defineConsoleProcedure } from "../trpc/procedures";
import * as s from "./schemas";

/** What the console's overview and explorer need that /v1 does not offer in one call. */
export const proofWithKeyProcedure = defineConsoleProcedure({
  summary: "A record's inclusion proof with the ledger's verifier key, to verify it in the browser",
  roles: ROLES,
  capability: "svc_api:provenance:read",
  resourceType: "provenance_record",
  input: s.RecordIdParams,
  response: s.InclusionProof.extend({ verifier_key: z.string() }),
  async handler(ctx) {
    ctx.setResource(ctx.input.id);
    return {
      ...(await inclusionProof(ctx.database, ctx.principal, ctx.input.id)),
      verifier_key: (await ledgerIdentity(ctx.database)).verifierKey,
    };
  },
});

export const LedgerStatus = z.object({
  ledger: z.object({
    record_count: z.number().int(),
    checkpoint_tree_size: z.number().int(),
    records_behind: z.number().int(),
    checkpoint_age_seconds: z.number().nullable(),
  }),
  ledger_sync_status: z.enum(["in_sync", "behind"]),
  passport_count: z.number().int(),
  checkpoint_size: z.number().int(),
});

export const ledgerStatusProcedure = defineConsoleProcedure({
  summary: "The overview's ledger and passport counts",
  roles: ROLES,
  capability: "svc_api:provenance:read",
  resourceType: "ledger_checkpoint",
  response: LedgerStatus,
  async handler(ctx) {
    const { status, ...ledger } = await ledgerSync(ctx.database);
    return {
      ledger,
      ledger_sync_status: status,
      passport_count: await countPassports(ctx.db, ctx.principal),
      checkpoint_size: ledger.checkpoint_tree_size,
    };
  },
});
