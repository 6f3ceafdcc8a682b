import { router } from "../trpc/init";
import { consoleQuery, queryFrom } from "../trpc/procedures";
import { ledgerStatusProcedure, proofWithKeyProcedure } from "./consoleProcedures";
import * as op from "./operations";

/** The console's provenance explorer: built from the /v1/provenance operations, plus the console's own. */
export const provenanceRouter = router({
  list: queryFrom(op.listProvenanceOp),
  get: queryFrom(op.getProvenanceOp),
  consistency: queryFrom(op.consistencyOp),
  proof: consoleQuery(proofWithKeyProcedure),
  status: consoleQuery(ledgerStatusProcedure),
});
