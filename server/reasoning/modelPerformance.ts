import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { catalogue } from "./catalogue";
import { WINDOW_DAYS } from "./measuredPerformance";
import type { ModelPerformanceResponse } from "./schemas";

/**
 * `GET /v1/reasoning/models/{id}/performance`: from the organization's recorded attempts on the
 * model (every provider offering that model_id, or one with `<provider>/<model_id>`) over the last
 * 30 days. Requests are attempts: a fallback's failed first try counts against the model that
 * failed. avg_latency_ms is over successful attempts; avg_cost_usd over all of them.
 * A model neither in the catalogue nor in the records is 404.
 */
export async function modelPerformance(
  db: Db,
  principal: Principal,
  id: string,
): Promise<z.input<typeof ModelPerformanceResponse>> {
  const models = await catalogue(db, principal.orgDid);
  const byKey = models.find((m) => m.key === id);
  const where = byKey ? { provider: byKey.provider.name, model: byKey.modelId } : { model: id };
  const since = new Date(Date.now() - WINDOW_DAYS * 86_400_000);
  const groups = await db.reasoningAttempt.groupBy({
    by: ["complexity", "status"],
    where: { orgDid: principal.orgDid, createdAt: { gte: since }, ...where },
    _count: { _all: true },
    _sum: { costUsd: true, latencyMs: true },
  });
  if (groups.length === 0 && !byKey && !models.some((m) => m.modelId === id)) throw NotFound("model", id);
  let total = 0;
  let ok = 0;
  let cost = 0;
  let latency = 0;
  const by: Record<string, { count: number; ok: number; cost: number }> = {};
  for (const g of groups) {
    const n = g._count._all;
    const c = (by[g.complexity] ??= { count: 0, ok: 0, cost: 0 });
    total += n;
    c.count += n;
    cost += g._sum.costUsd ?? 0;
    c.cost += g._sum.costUsd ?? 0;
    if (g.status === "succeeded") {
      ok += n;
      c.ok += n;
      latency += g._sum.latencyMs ?? 0;
    }
  }
  const r = (x: number, d = 1e9) => Math.round(x * d) / d;
  return {
    model_id: byKey?.modelId ?? id,
    total_requests: total,
    success_rate: total > 0 ? r(ok / total, 1e4) : 0,
    avg_latency_ms: ok > 0 ? r(latency / ok, 10) : 0,
    avg_cost_usd: total > 0 ? r(cost / total) : 0,
    by_complexity: Object.fromEntries(
      Object.entries(by).map(([k, c]) => [
        k,
        { count: c.count, success_rate: r(c.ok / c.count, 1e4), avg_cost: r(c.cost / c.count) },
      ]),
    ),
  };
}
