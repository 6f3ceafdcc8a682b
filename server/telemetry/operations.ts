import { z } from "zod";
import { Forbidden } from "../errors";
import { defineOperation } from "../http/operation";
import { rootOrgDidOf } from "../setup/rootOrg";
import { exposition } from "./metrics";

const EXAMPLE = `# HELP svc_requests_total Governed calls (/v1 and the console's tRPC) by operation id and HTTP status, refusals included.
# TYPE svc_requests_total counter
svc_requests_total{operation="listPassports",status="200"} 42
`;

/**
 * GET /metrics: Prometheus' text exposition of this process's metrics (server/telemetry/metrics.ts).
 * A governed read like any other (a bearer token holding `svc_api:metrics:read`, recorded in the
 * ledger); a scraper that should neither hold a token nor leave a record per scrape uses
 * `SVC_METRICS_PORT` instead (server/telemetry/metricsServer.ts).
 *
 * An operator's endpoint, like that port: the figures are the deployment's (every organization's
 * calls, executions, spend), so only the root organization's keys read them; a tenant's key,
 * whatever it holds, is refused with 403. Filtering to one organization would leave most families
 * (process, sandbox, pool, queue) meaningless or misleading to a tenant.
 */
export const metricsOp = defineOperation({
  id: "getMetrics",
  method: "GET",
  path: "/metrics",
  tag: "Telemetry",
  summary: "Prometheus metrics of the process that answers (text exposition format 0.0.4)",
  description:
    "The operator's endpoint: only keys of the root organization read it (a tenant's key is 403, whatever its capabilities). Calls, refusals, jobs, webhook deliveries and sandbox threads of the answering process (each process counts its own: scrape every one), and the deployment's queues, executions, pending approvals, model spend, ledger size and latest checkpoint, read from the database at most every 5 s.",
  capability: "svc_api:metrics:read",
  resourceType: null,
  response: z.string().describe("text/plain Prometheus exposition").meta({ example: EXAMPLE }),
  responseType: "text/plain",
  successStatus: 200,
  async handler(ctx) {
    if (ctx.principal.orgDid !== (await rootOrgDidOf(ctx.database)))
      throw Forbidden(
        "GET /metrics is the operator's: its figures are the whole deployment's (every organization's calls, executions and spend), so only keys of the root organization read it.",
        { reason: "operator_only" },
      );
    const { text, contentType } = await exposition();
    return new Response(text, { headers: { "Content-Type": contentType } });
  },
});

export const telemetryOperations = [metricsOp];
