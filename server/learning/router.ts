import { router } from "../trpc/init";
import { mutationFrom, queryFrom } from "../trpc/procedures";
import * as op from "./operations";

/** The console's learning procedures, built from the /v1 operations. */
export const learningRouter = router({
  list: queryFrom(op.listLearningProposalsOp),
  get: queryFrom(op.getLearningProposalOp),
  propose: mutationFrom(op.createLearningProposalOp),
  approve: mutationFrom(op.approveLearningProposalOp),
  reject: mutationFrom(op.rejectLearningProposalOp),
  applyChange: mutationFrom(op.applyLearningProposalOp),
  rollback: mutationFrom(op.rollbackLearningProposalOp),
});
