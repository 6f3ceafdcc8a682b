"use client";

import { useQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { useSearchParams } from "next/navigation";
import { useMemo } from "react";
import { DataTable } from "@/components/ui/data-table";
import { Badge, Card, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { usdExact } from "./Playground";
import { problemOf, useTRPC } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"]["spend"];
type DelegationRow = Outputs["byDelegation"]["data"][number];
type EntityRow = Outputs["byEntity"]["data"][number];

const WINDOWS = [
  { days: 1, label: "Last 24 hours" },
  { days: 7, label: "Last 7 days" },
  { days: 30, label: "Last 30 days" },
  { days: 90, label: "Last 90 days" },
] as const;
const PERIOD = { total: "in all", day: "per day (UTC)", month: "per month (UTC)" } as const;

/**
 * What reasoning calls cost: per delegation (with the budget it carries: its limit and period,
 * what its current period has spent and reserved, and what is left) and per entity (`entity_id`),
 * over a window kept in the URL.
 */
export function Spend() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const daysParam = Number(params.get("days"));
  const days = WINDOWS.some((w) => w.days === daysParam) ? daysParam : 30;
  // The window's start, to the minute: the query key stays stable between renders.
  const since = useMemo(() => {
    const at = new Date(Date.now() - days * 86_400_000);
    at.setUTCSeconds(0, 0);
    return at.toISOString();
  }, [days]);
  const byDelegation = useQuery(trpc.reasoning.spend.byDelegation.queryOptions({ since }));
  const byEntity = useQuery(trpc.reasoning.spend.byEntity.queryOptions({ since }));
  const total = (byDelegation.data?.data ?? []).reduce((s, d) => s + d.spent_usd, 0);
  const calls = (byEntity.data?.data ?? []).reduce((s, d) => s + d.calls, 0);

  return (
    <>
      <PageHeader
        title="Spend"
        description="What routed model calls cost, per delegation and per entity. A delegation's budget counts its own calls and those of every delegation derived from it."
      />
      <div className="mb-6 flex flex-wrap items-end gap-4">
        <div className="w-56 space-y-1.5">
          <Label htmlFor="spend-window">Window</Label>
          <NativeSelect
            id="spend-window"
            value={days}
            onChange={(e) => writeParams((next) => next.set("days", e.target.value))}
          >
            {WINDOWS.map((w) => (
              <option key={w.days} value={w.days}>
                {w.label}
              </option>
            ))}
          </NativeSelect>
        </div>
        <Card className="px-4 py-2 text-sm" data-testid="spend-total">
          <span className="text-muted-foreground">Settled in the window: </span>
          <span className="font-semibold tabular-nums">{usdExact(total)}</span>
          <span className="text-muted-foreground"> over {calls} call(s)</span>
        </Card>
      </div>
      <h2 className="mb-3 text-lg font-semibold">Per delegation</h2>
      <DataTable
        caption="Spend per delegation"
        columns={DELEGATION_COLUMNS}
        data={byDelegation.data?.data ?? []}
        loading={byDelegation.isLoading}
        error={byDelegation.error ? problemOf(byDelegation.error).detail : null}
        empty="No routed call in this window."
      />
      <h2 className="mb-3 mt-8 text-lg font-semibold">Per entity</h2>
      <DataTable
        caption="Spend per entity"
        columns={ENTITY_COLUMNS}
        data={byEntity.data?.data ?? []}
        loading={byEntity.isLoading}
        error={byEntity.error ? problemOf(byEntity.error).detail : null}
        empty="No routed call in this window."
      />
    </>
  );
}

const money = (n: number | null) => <span className="tabular-nums">{n === null ? "–" : usdExact(n)}</span>;

const DELEGATION_COLUMNS: ColumnDef<DelegationRow, unknown>[] = [
  {
    header: "Delegation",
    cell: ({ row }) => (
      <div className="min-w-40">
        <div className="font-medium">{row.original.name ?? "unnamed"}</div>
        <Mono className="text-muted-foreground">{row.original.delegation_id}</Mono>
      </div>
    ),
  },
  { header: "Calls", cell: ({ row }) => <span className="tabular-nums">{row.original.calls}</span> },
  { header: "Spent", cell: ({ row }) => money(row.original.spent_usd) },
  { header: "Running calls", cell: ({ row }) => money(row.original.reserved_usd) },
  {
    header: "Budget",
    cell: ({ row }) =>
      row.original.budget ? (
        // The amount in one piece; its period may wrap under it, so the eight columns fit at 1280 px.
        <span className="tabular-nums">
          <span className="whitespace-nowrap">{usdExact(row.original.budget.limit_usd)}</span>{" "}
          {PERIOD[row.original.budget.period]}
        </span>
      ) : (
        <span className="text-muted-foreground">none</span>
      ),
  },
  { header: "Period spent", cell: ({ row }) => money(row.original.budget_spent_usd) },
  { header: "Period reserved", cell: ({ row }) => money(row.original.budget_reserved_usd) },
  {
    header: "Left",
    cell: ({ row }) => {
      const { budget, remaining_usd: left } = row.original;
      if (!budget || left === null) return <span className="text-muted-foreground">–</span>;
      const share = left / budget.limit_usd;
      return (
        <Badge tone={share <= 0 ? "danger" : share < 0.2 ? "warning" : "success"} className="tabular-nums">
          {usdExact(left)}
        </Badge>
      );
    },
  },
];

const ENTITY_COLUMNS: ColumnDef<EntityRow, unknown>[] = [
  {
    header: "Entity",
    cell: ({ row }) =>
      row.original.entity_id ? (
        <Mono>{row.original.entity_id}</Mono>
      ) : (
        <span className="text-muted-foreground">none given</span>
      ),
  },
  { header: "Calls", cell: ({ row }) => <span className="tabular-nums">{row.original.calls}</span> },
  { header: "Spent", cell: ({ row }) => money(row.original.spent_usd) },
  { header: "Running calls", cell: ({ row }) => money(row.original.reserved_usd) },
];
