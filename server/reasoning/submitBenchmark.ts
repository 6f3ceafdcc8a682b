import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { catalogueHasModel } from "./benchmarkModels";
import type { BenchmarkSubmission } from "./benchmarkSchemas";
import { benchmarkView } from "./benchmarkView";

/**
 * Records one benchmark run of a catalogue model for the caller's organization. svc does not run
 * suites: CI jobs and people submit what they measured, and the console charts it beside the
 * latency and success rate svc measures itself. The bounds (score 0..100, passed ≤ total, run_at
 * not in the future, raw_results ≤ 64 KiB) are the schema's; an unknown model is 404 like any id
 * the caller names that svc does not hold.
 */
export async function submitBenchmark(tx: Db, principal: Principal, body: z.output<typeof BenchmarkSubmission>) {
  if (!(await catalogueHasModel(tx, principal, body.model_id))) throw NotFound("model", body.model_id);
  const row = await tx.modelBenchmark.create({
    data: {
      id: newId("bmk"),
      orgDid: principal.orgDid,
      modelId: body.model_id,
      benchmarkType: body.benchmark_type,
      benchmarkSuite: body.benchmark_suite,
      score: body.score,
      runAt: body.run_at ? new Date(body.run_at) : new Date(),
      runBy: body.run_by ?? principal.actorDid,
      testCasesPassed: body.test_cases_passed ?? null,
      testCasesTotal: body.test_cases_total ?? null,
      rawResults: body.raw_results === undefined ? undefined : (body.raw_results as object),
      delegationId: principal.delegationId,
    },
  });
  return benchmarkView(row);
}
