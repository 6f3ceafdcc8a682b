import { router } from "../trpc/init";
import { mutationFrom, queryFrom } from "../trpc/procedures";
import * as op from "./benchmarkOperations";

/** The console's benchmark procedures, built from the /v1 operations. */
export const benchmarksRouter = router({
  submit: mutationFrom(op.submitBenchmarkOp),
  list: queryFrom(op.listBenchmarksOp),
  summary: queryFrom(op.summarizeBenchmarksOp),
});
