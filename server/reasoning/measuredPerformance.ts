import type { Db } from "../db/client";

/** A model's measured performance, from the organization's recorded attempts. */
export interface Measured {
  attempts: number;
  avgLatencyMs: number;
  reliability: number;
  successRate: number;
}

export const WINDOW_DAYS = 30;
export const UNMEASURED: Measured = { attempts: 0, avgLatencyMs: 0, reliability: 1, successRate: 1 };

/**
 * Per model key (`<provider>/<model>`), over the last 30 days: the success rate (attempts that
 * answered), the reliability (attempts that did not fail on the provider's side: an error or a
 * timeout; a rate limit is the provider saying "later", not failing) and the mean latency of the
 * successful ones. One grouped query for the whole catalogue.
 */
export async function measuredPerformance(db: Db, orgDid: string): Promise<Map<string, Measured>> {
  const since = new Date(Date.now() - WINDOW_DAYS * 86_400_000);
  const groups = await db.reasoningAttempt.groupBy({
    by: ["provider", "model", "status"],
    where: { orgDid, createdAt: { gte: since } },
    _count: { _all: true },
    _avg: { latencyMs: true },
  });
  const acc = new Map<string, { total: number; ok: number; failed: number; latencySum: number }>();
  for (const g of groups) {
    const key = `${g.provider}/${g.model}`;
    const a = acc.get(key) ?? { total: 0, ok: 0, failed: 0, latencySum: 0 };
    const n = g._count._all;
    a.total += n;
    if (g.status === "succeeded") {
      a.ok += n;
      a.latencySum += (g._avg.latencyMs ?? 0) * n;
    }
    if (g.status === "error" || g.status === "timeout") a.failed += n;
    acc.set(key, a);
  }
  return new Map(
    [...acc].map(([key, a]) => [
      key,
      {
        attempts: a.total,
        avgLatencyMs: a.ok > 0 ? Math.round((a.latencySum / a.ok) * 10) / 10 : 0,
        reliability: a.total > 0 ? (a.total - a.failed) / a.total : 1,
        successRate: a.total > 0 ? a.ok / a.total : 1,
      },
    ]),
  );
}
