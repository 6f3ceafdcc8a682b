import type { z } from "zod";
import type { Db } from "../db/client";
import type { ModelBenchmark } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { BenchmarkListQuery } from "./benchmarkSchemas";
import { benchmarkView } from "./benchmarkView";

/**
 * The organization's benchmark results, newest run first, filtered by model, type and suite.
 * Keyed on (run_at, id): results are often submitted late (a nightly job backfilling a week), so
 * the order is when a suite ran, not when svc heard of it.
 */
export async function listBenchmarks(
  db: Db,
  principal: Principal,
  query: z.output<typeof BenchmarkListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<ModelBenchmark>(secret, "benchmarks", query, (last) => [
    last.runAt.toISOString(),
    last.id,
  ]);
  const rows = await db.modelBenchmark.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.model_id ? { modelId: query.model_id } : {}),
      ...(query.benchmark_type ? { benchmarkType: query.benchmark_type } : {}),
      ...(query.benchmark_suite ? { benchmarkSuite: query.benchmark_suite } : {}),
      ...olderThan(after, "runAt", "id"),
    },
    orderBy: [{ runAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(benchmarkView), pagination };
}
