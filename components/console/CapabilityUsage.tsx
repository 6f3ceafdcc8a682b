"use client";

import type { ColumnDef } from "@tanstack/react-table";
import { useSearchParams } from "next/navigation";
import { useMemo } from "react";
import type { z } from "zod";
import { ChartFigure, Legend } from "@/components/charts/ChartFigure";
import { HorizontalBarChart, horizontalBarHeight } from "@/components/charts/HorizontalBarChart";
import { SERIES } from "@/components/charts/series";
import { DataTable } from "@/components/ui/data-table";
import { Badge, Label, NativeSelect } from "@/components/ui/primitives";
import type { CapabilityUsage as CapabilityUsageRow } from "@/server/identity/schemas";
import { cn } from "@/components/ui/cn";
import { ago } from "./format";
import { problemOf } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

type Row = z.infer<typeof CapabilityUsageRow>;

/** The windows usage is counted over; the API's default (30 days) first among equals. */
const WINDOWS = [7, 30, 90] as const;
const DEFAULT_DAYS = 30;

/**
 * The usage window kept in the URL (`?days=7|30|90`, default 30) and its start as the API takes
 * it, to the minute, so that the query key stays stable between renders.
 */
export function useUsageWindow(): { days: number; since: string; setDays(days: number): void } {
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const asked = Number(params.get("days"));
  const days = (WINDOWS as readonly number[]).includes(asked) ? asked : DEFAULT_DAYS;
  const since = useMemo(() => {
    const at = new Date(Date.now() - days * 86_400_000);
    at.setUTCSeconds(0, 0);
    return at.toISOString();
  }, [days]);
  const setDays = (d: number) =>
    writeParams((next) => (d === DEFAULT_DAYS ? next.delete("days") : next.set("days", String(d))));
  return { days, since, setDays };
}

function UsageWindowSelect({ id, days, onChange }: { id: string; days: number; onChange(d: number): void }) {
  return (
    <div className="flex items-center gap-2">
      <Label htmlFor={id} className="text-muted-foreground">
        Window
      </Label>
      <NativeSelect id={id} className="w-40" value={days} onChange={(e) => onChange(Number(e.target.value))}>
        {WINDOWS.map((d) => (
          <option key={d} value={d}>
            Last {d} days
          </option>
        ))}
      </NativeSelect>
    </div>
  );
}

/** A capability as the chart's axis shows it: the `svc_api:` every API capability carries adds nothing there. */
const shortCapability = (c: string) => c.replace(/^svc_api:/, "");

/** The table's columns; `grant` names what the subject's capabilities are: a key's held, an agent's declared. */
const columnsFor = (grant: "held" | "declared"): ColumnDef<Row & { unused: boolean }, unknown>[] => [
  {
    header: "Capability",
    cell: ({ row }) => (
      <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <span className="font-mono text-xs [overflow-wrap:anywhere]">{row.original.capability}</span>
        {!row.original.granted ? (
          <Badge tone="danger">{grant === "held" ? "not granted" : "not declared"}</Badge>
        ) : row.original.unused ? (
          <Badge tone="warning">unused</Badge>
        ) : null}
      </span>
    ),
  },
  { header: "Calls", cell: ({ row }) => <span className="tabular-nums">{row.original.calls}</span> },
  { header: "Refused", cell: ({ row }) => <span className="tabular-nums">{row.original.refused}</span> },
  {
    header: "Last use",
    cell: ({ row }) =>
      row.original.last_used_at ? (
        <span className="whitespace-nowrap text-xs" title={row.original.last_used_at}>
          {ago(row.original.last_used_at)}
        </span>
      ) : (
        <span className="text-xs text-muted-foreground">never in the window</span>
      ),
  },
];

/**
 * Granted against used, as a section titled `title` with its window selector: per capability the
 * calls let through and refused in the window, and the held ones nothing was let through under
 * marked unused; a chart of the used ones when there are any. `counted` says what the counts
 * include (derived delegations, an agent's runs).
 */
export function CapabilityUsagePanel<U extends { capabilities: Row[]; unused: string[] }>({
  id,
  title,
  level,
  window,
  query,
  counted,
  grant = "held",
  className,
}: {
  /** Prefix of the section's element ids. */
  id: string;
  title: string;
  level: 2 | 3;
  window: ReturnType<typeof useUsageWindow>;
  query: { data?: U; isLoading: boolean; error: unknown };
  counted?: (usage: U) => string;
  /** What the subject's capabilities are to it: a key holds them, an agent's manifest declares them. */
  grant?: "held" | "declared";
  className?: string;
}) {
  const usage = query.data;
  const unused = new Set(usage?.unused ?? []);
  const rows = (usage?.capabilities ?? []).map((r) => ({ ...r, unused: unused.has(r.capability) }));
  const active = rows.filter((r) => r.calls + r.refused > 0);
  const used = rows.filter((r) => r.granted && r.calls > 0).length;
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <section aria-labelledby={`${id}-title`} className={cn("space-y-4", className)}>
      <div className="flex flex-wrap items-center justify-between gap-3">
        <Heading id={`${id}-title`} className={level === 2 ? "text-lg font-semibold" : "text-sm font-semibold"}>
          {title}
        </Heading>
        <UsageWindowSelect id={`${id}-window`} days={window.days} onChange={window.setDays} />
      </div>
      {usage ? (
        <p className="text-sm" data-testid="usage-summary">
          <span className="font-semibold tabular-nums">{used}</span> capabilities used in the window,{" "}
          <span className="font-semibold tabular-nums">{unused.size}</span> {grant} and unused
          {counted ? <span className="text-muted-foreground"> · {counted(usage)}</span> : null}
        </p>
      ) : null}
      {active.length > 0 ? (
        <div className="rounded-lg border border-border bg-card p-4">
          <ChartFigure
            title="Calls per capability"
            summary="let through and refused, in the window"
            height={horizontalBarHeight(active.length)}
            table={{
              head: ["Capability", "Calls", "Refused"],
              rows: active.map((r) => [r.capability, r.calls, r.refused]),
            }}
          >
            <HorizontalBarChart
              data={active.map((r) => ({ capability: r.capability, calls: r.calls, refused: r.refused }))}
              y="capability"
              formatY={shortCapability}
              series={[
                { key: "calls", label: "Let through", color: SERIES.allowed },
                { key: "refused", label: "Refused", color: SERIES.refused },
              ]}
            />
          </ChartFigure>
          <Legend
            items={[
              { label: "Let through", color: SERIES.allowed },
              { label: "Refused", color: SERIES.refused },
            ]}
          />
        </div>
      ) : null}
      <DataTable
        caption="Capabilities granted and used"
        columns={columnsFor(grant)}
        data={rows}
        loading={query.isLoading}
        error={query.error ? problemOf(query.error).detail : null}
        empty={grant === "held" ? "It holds no capability." : "Its manifest declares no capability."}
      />
    </section>
  );
}
