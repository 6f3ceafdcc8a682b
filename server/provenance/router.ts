import { ListQuery } from "../http/cursor";
import { ledgerIdentity } from "../ledger/origin";
import { inclusionProof, ledgerSync } from "../ledger/proofs";
import { orgProcedure, router } from "../trpc/init";
import { getProvenanceRecord, listProvenance } from "./records";
import * as s from "./schemas";

const read = (resourceType: string, capability = "svc_api:provenance:read") => orgProcedure.meta({ capability, resourceType });

/** The console's provenance explorer: the same services as /v1/provenance. */
export const provenanceRouter = router({
  list: read("provenance_record")
    .input(ListQuery.extend(s.ProvenanceListQuery.shape))
    .query(({ ctx, input }) => listProvenance(ctx.scope.db, ctx.scope.principal, input, ctx.scope.secret)),
  get: read("provenance_record")
    .input(s.RecordIdParams)
    .query(({ ctx, input }) => {
      ctx.scope.setResource(input.id);
      return getProvenanceRecord(ctx.scope.db, ctx.scope.principal, input.id);
    }),
  proof: read("provenance_record")
    .input(s.RecordIdParams)
    .query(async ({ ctx, input }) => {
      ctx.scope.setResource(input.id);
      return { ...(await inclusionProof(ctx.scope.database, ctx.scope.principal, input.id)), verifier_key: (await ledgerIdentity(ctx.scope.database)).verifierKey };
    }),
  status: read("ledger_checkpoint").query(async ({ ctx }) => {
    const { status, ...ledger } = await ledgerSync(ctx.scope.database);
    const passports = await ctx.scope.db.passport.count({ where: { orgDid: ctx.scope.principal.orgDid } });
    return { ledger, ledger_sync_status: status, passport_count: passports, checkpoint_size: ledger.checkpoint_tree_size };
  }),
});
