import { router } from "../trpc/init";
import { consoleMutation, consoleQuery, mutationFrom, queryFrom } from "../trpc/procedures";
import {
  addProviderProcedure,
  listProvidersProcedure,
  listRoutingRulesProcedure,
  removeProviderProcedure,
  removeRoutingRuleProcedure,
  setRoutingRuleProcedure,
  spendByDelegationProcedure,
  spendByEntityProcedure,
} from "./consoleProcedures";
import * as op from "./operations";
import { benchmarksRouter } from "./benchmarkRouter";

/**
 * The console's reasoning procedures: the /v1 operations (the playground's `think` is the same
 * governed call, under the signed-in person's session delegation and its budget), plus provider
 * administration, routing rules and spend views, which only the console has.
 */
export const reasoningRouter = router({
  think: mutationFrom(op.thinkOp),
  models: queryFrom(op.listModelsOp),
  performance: queryFrom(op.modelPerformanceOp),
  calls: router({
    list: queryFrom(op.listCallsOp),
    get: queryFrom(op.getCallOp),
    feedback: mutationFrom(op.callFeedbackOp),
  }),
  providers: router({
    list: consoleQuery(listProvidersProcedure),
    add: consoleMutation(addProviderProcedure),
    remove: consoleMutation(removeProviderProcedure),
  }),
  rules: router({
    list: consoleQuery(listRoutingRulesProcedure),
    set: consoleMutation(setRoutingRuleProcedure),
    remove: consoleMutation(removeRoutingRuleProcedure),
  }),
  spend: router({
    byDelegation: consoleQuery(spendByDelegationProcedure),
    byEntity: consoleQuery(spendByEntityProcedure),
  }),
  benchmarks: benchmarksRouter,
});
