import { describe, expect, it } from "vitest";
import * as metricsRoute from "@/app/metrics/route";
import { database } from "@/server/db/client";
import { apiKey, call, secondOrg, useTestServer } from "./harness";

/**
 * GET /metrics on the API's port is the operator's, as the metrics port is: its figures are the
 * whole deployment's (every organization's calls, executions, spend), so a tenant's key holding
 * `svc_api:metrics:read` is refused, and the refusal recorded.
 */
const ctx = useTestServer();

describe("GET /metrics and tenants", () => {
  it("refuses a tenant's key holding svc_api:metrics:read with 403 saying why, and records the refusal", async () => {
    const tenant = await secondOrg(ctx.server.url, ctx.root.token);
    for (const capabilities of [["svc_api:metrics:read"], ["svc_api:*"]]) {
      const key = await apiKey(capabilities, tenant.orgDid);
      const res = await call(ctx.server.url, "GET", "/metrics", { token: key.token });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toMatch(/forbidden$/);
      expect(res.body.reason).toBe("operator_only");
      expect(res.body.detail).toMatch(/root organization/);
      expect(JSON.stringify(res.body)).not.toContain("svc_requests_total");
      const viaNext = await metricsRoute.GET(
        new Request("http://localhost/metrics", { headers: { Authorization: `Bearer ${key.token}` } }),
      );
      expect(viaNext.status).toBe(403);
    }
    const db = await database();
    const refused = await db.read.provenanceRecord.findMany({
      where: { operation: "GET /metrics", orgDid: tenant.orgDid },
    });
    expect(refused.length).toBe(4);
    for (const r of refused) expect(r.status).toBe(403);
  });

  it("still serves the root organization's key holding only svc_api:metrics:read", async () => {
    const scraper = await apiKey(["svc_api:metrics:read"]);
    const res = await fetch(`${ctx.server.url}/metrics`, { headers: { Authorization: `Bearer ${scraper.token}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^svc_requests_total\{/m);
  });
});
