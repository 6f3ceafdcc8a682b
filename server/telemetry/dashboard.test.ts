import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { metricsRegistry } from "./metrics";

/** The Grafana dashboard shipped in ops/grafana: it loads, and asks only for what the registry exposes. */
const dashboard = JSON.parse(
  readFileSync(new URL("../../ops/grafana/svc-dashboard.json", import.meta.url), "utf8"),
) as {
  templating: { list: { name: string; type: string; query: string }[] };
  panels: { type: string; title: string; datasource?: { uid: string }; targets?: { expr: string }[] }[];
};
const panels = dashboard.panels.filter((p) => p.type !== "row");
const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
// A histogram is queried through its series' suffixes.
const familyOf = (series: string) => series.replace(/_(bucket|sum|count)$/, "");
const exposed = new Set(
  metricsRegistry()
    .getMetricsAsArray()
    .map((m) => m.name),
);

describe("ops/grafana/svc-dashboard.json", () => {
  it("takes its Prometheus datasource as a template variable, in every panel and query", () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: "datasource", type: "datasource", query: "prometheus" }),
    );
    for (const p of panels) {
      expect(p.datasource?.uid, p.title).toBe("${datasource}");
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
  });

  it("references only metric names the registry exposes", () => {
    const referenced = new Set(exprs.flatMap((e) => e.match(/\bsvc_[a-z0-9_]+/g) ?? []));
    expect(referenced.size).toBeGreaterThan(10);
    for (const series of referenced) expect(exposed, series).toContain(familyOf(series));
  });

  it("shows every family svc defines itself (the process defaults aside)", () => {
    const referenced = new Set(exprs.flatMap((e) => (e.match(/\bsvc_[a-z0-9_]+/g) ?? []).map(familyOf)));
    const own = [...exposed].filter((n) => !/^svc_(process_|nodejs_)/.test(n));
    expect(own.length).toBeGreaterThan(10);
    for (const name of own) expect(referenced, name).toContain(name);
  });

  // Issue 27: the processes are scraped one by one; a panel over every job would mix deployments.
  it("keeps every query to one Prometheus job, chosen in its `job` variable", () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: "job", type: "query", query: "label_values(svc_requests_total, job)" }),
    );
    const selectors = exprs.flatMap((e) => [...e.matchAll(/\bsvc_[a-z0-9_]+(\{[^}]*\})?/g)].map((m) => m[0]));
    expect(selectors.length).toBeGreaterThanOrEqual(exprs.length);
    for (const selector of selectors) expect(selector).toMatch(/\{job="\$job"[,}]/);
  });
});
