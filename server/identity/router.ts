import { consoleMutation, mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import { createApiKeyProcedure } from "./consoleProcedures";
import * as op from "./operations";

/** The console's identity procedures: built from the /v1 operations, plus the console's own. */
export const identityRouter = router({
  passports: router({
    list: queryFrom(op.listPassportsOp),
    get: queryFrom(op.getPassportOp),
    register: mutationFrom(op.createPassportOp),
    update: mutationFrom(op.updatePassportOp),
  }),
  sessions: router({
    exchange: mutationFrom(op.exchangeSessionOp),
  }),
  delegations: router({
    list: queryFrom(op.listDelegationsOp),
    get: queryFrom(op.getDelegationOp),
    issue: mutationFrom(op.createDelegationTokenOp),
    revoke: mutationFrom(op.revokeDelegationOp),
    usage: queryFrom(op.getDelegationUsageOp),
    // A POST on /v1 (its body is a grant), so a mutation here; it changes nothing.
    simulate: mutationFrom(op.simulateNarrowingOp),
  }),
  apiKeys: router({
    create: consoleMutation(createApiKeyProcedure),
  }),
  revocations: router({
    list: queryFrom(op.listRevocationsOp),
  }),
  capabilities: router({
    // A POST on /v1 (its body is a list), so a mutation here, governed as /v1 governs it.
    match: mutationFrom(op.matchCapabilitiesOp),
  }),
});
