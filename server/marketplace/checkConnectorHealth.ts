import type { Database } from "../db/client";
import { OutboundError } from "../outbound/errors";
import { outboundRequest } from "../outbound/outboundRequest";
import { catalogue } from "./catalogue";

export type HealthStatus = "healthy" | "degraded" | "down" | "unknown";

/** Slower than this, an API that answers is `degraded`. */
const SLOW_MS = 2_000;
const TIMEOUT_MS = 5_000;
const CONCURRENCY = 8;

export interface Probe {
  status: HealthStatus;
  detail: string | null;
}

/**
 * One look at a provider's API: a GET of its base URL (or the definition's health path) without
 * credentials, through the outbound guard. An API that answers below 500 in time is up, even
 * with a 401 or 404: it is there, it only wants a token or another path. A 5xx or a slow answer
 * is `degraded`; no answer (refused, unreachable, timed out) is `down`.
 */
export async function probe(url: string): Promise<Probe> {
  try {
    const answer = await outboundRequest(url, {
      method: "GET",
      timeoutMs: TIMEOUT_MS,
      maxBytes: 4096,
      redirect: "manual",
      headers: { accept: "application/json" },
    });
    if (answer.status >= 500) return { status: "degraded", detail: `answered ${answer.status}` };
    if (answer.durationMs > SLOW_MS) return { status: "degraded", detail: `answered in ${answer.durationMs} ms` };
    return { status: "healthy", detail: null };
  } catch (e) {
    return { status: "down", detail: e instanceof OutboundError ? e.message.slice(0, 500) : "no answer" };
  }
}

/** The URL probed: the definition's health path under the base URL (its path kept), or the base URL itself. */
export function healthUrl(baseUrl: string, path: string | undefined): string {
  if (!path) return baseUrl;
  const base = new URL(baseUrl);
  base.pathname = `${base.pathname.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
  return base.toString();
}

async function inBatches<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(fn));
}

/**
 * The worker's periodic health check, feeding `health_status`: the API of each connector with
 * active installations (ConnectorHealth, shown in the catalogue) and each active installation
 * whose base URL is its own; the other active installations take their connector's verdict. An installation whose
 * token could not be refreshed stays `down` (its token is the problem, not the API); the next
 * successful refresh clears that. Returns how many verdicts it wrote.
 */
export async function checkConnectorHealth(
  db: Database,
  options: { connectorIds?: readonly string[]; now?: Date } = {},
): Promise<number> {
  const now = options.now ?? new Date();
  // Only connectors someone uses: svc does not poll the APIs of the whole catalogue.
  const inUse = new Set(
    options.connectorIds ??
      (await db.read.connectorInstallation.groupBy({ by: ["connectorId"], where: { status: "active" } })).map(
        (g) => g.connectorId,
      ),
  );
  const connectors = catalogue()
    .connectors.map((c) => c.definition)
    .filter((c) => inUse.has(c.connector_id));
  const healthPath = new Map(connectors.map((c) => [c.connector_id, c.health_check_path]));
  const verdicts = new Map<string, Probe>();
  await inBatches(connectors, async (c) => {
    verdicts.set(c.connector_id, await probe(healthUrl(c.api_base_url, c.health_check_path)));
  });
  let written = 0;
  // An installation whose token could not be refreshed keeps its `down`: its token is the problem, not the API.
  const tokenFine = { OR: [{ healthDetail: null }, { NOT: { healthDetail: { startsWith: TOKEN_PROBLEM } } }] };
  await db.writeTx(async (tx) => {
    for (const [connectorId, v] of verdicts) {
      await tx.connectorHealth.upsert({
        where: { connectorId },
        create: { connectorId, status: v.status, checkedAt: now, detail: v.detail },
        update: { status: v.status, checkedAt: now, detail: v.detail },
      });
      written++;
      const { count } = await tx.connectorInstallation.updateMany({
        where: { connectorId, status: "active", baseUrl: null, ...tokenFine },
        data: { healthStatus: v.status, healthCheckedAt: now, healthDetail: v.detail },
      });
      written += count;
    }
  });
  const own = await db.read.connectorInstallation.findMany({
    where: { status: "active", connectorId: { in: [...verdicts.keys()] }, baseUrl: { not: null }, ...tokenFine },
    select: { id: true, baseUrl: true, connectorId: true },
  });
  await inBatches(own, async (i) => {
    const v = await probe(healthUrl(i.baseUrl!, healthPath.get(i.connectorId)));
    await db.writeTx((tx) =>
      tx.connectorInstallation.updateMany({
        where: { id: i.id, status: "active" },
        data: { healthStatus: v.status, healthCheckedAt: now, healthDetail: v.detail },
      }),
    );
    written++;
  });
  return written;
}

/** How the token refresh marks an installation it could not refresh (its `health_detail` starts so). */
export const TOKEN_PROBLEM = "token refresh failed";
