"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { useSearchParams } from "next/navigation";
import { useMemo } from "react";
import { ChartFigure, Legend } from "@/components/charts/ChartFigure";
import { ComparisonRadarChart } from "@/components/charts/ComparisonRadarChart";
import { GroupedBarChart } from "@/components/charts/GroupedBarChart";
import { TrendLineChart } from "@/components/charts/TrendLineChart";
import { categoricalColor, type Series } from "@/components/charts/series";
import { DataTable } from "@/components/ui/data-table";
import { Card, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import { cn } from "@/components/ui/cn";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago } from "./format";
import { useTRPC } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"]["benchmarks"];
type Summary = Outputs["summary"];
type Result = Outputs["list"]["data"][number];

const WINDOWS = [
  { days: 30, label: "Last 30 days" },
  { days: 90, label: "Last 90 days" },
  { days: 365, label: "Last year" },
  { days: 730, label: "Last two years" },
] as const;

const score = (n: number) => n.toFixed(1);
const dayLabel = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString([], { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * Model benchmarks as charts: each model's standing per benchmark type, its scores over time, and
 * two or more models side by side. The window, the type over time and the models compared live
 * in the URL, so a comparison can be shared.
 */
export function Benchmarks() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const daysParam = Number(params.get("days"));
  const days = WINDOWS.some((w) => w.days === daysParam) ? daysParam : 90;
  const setParam = (key: string, value: string | undefined) =>
    writeParams((next) => (value ? next.set(key, value) : next.delete(key)));

  const summary = useQuery(trpc.reasoning.benchmarks.summary.queryOptions({ days }));
  const results = useInfiniteQuery(
    trpc.reasoning.benchmarks.list.infiniteQueryOptions(
      { limit: 20 },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const s = summary.data;
  const colorOf = useMemo(() => {
    const index = new Map((s?.models ?? []).map((m, i) => [m, i]));
    return (model: string) => categoricalColor(index.get(model) ?? 0);
  }, [s?.models]);
  const empty = s !== undefined && s.results_read === 0;
  const picked = params.get("compare")?.split(",").filter(Boolean);
  const compared = chosenModels(picked, s?.models ?? []);

  return (
    <>
      <PageHeader
        title="Model benchmarks"
        description="Scores your CI jobs and people submit (POST /v1/reasoning/benchmarks), per model. Latency and success rate svc measures itself, from real calls."
        actions={
          <div className="flex items-center gap-2">
            <Label htmlFor="benchmark-window" className="whitespace-nowrap text-muted-foreground">
              Window
            </Label>
            <NativeSelect
              id="benchmark-window"
              value={days}
              onChange={(e) => setParam("days", e.target.value === "90" ? undefined : e.target.value)}
              className="w-40"
            >
              {WINDOWS.map((w) => (
                <option key={w.days} value={w.days}>
                  {w.label}
                </option>
              ))}
            </NativeSelect>
          </div>
        }
      />
      {summary.error ? (
        <p role="alert" className="mb-4 text-sm text-destructive">
          The benchmarks could not be loaded: {summary.error.message}
        </p>
      ) : null}
      {empty ? (
        <EmptyBenchmarks days={days} />
      ) : (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
          <Card className="min-w-0 overflow-hidden p-5 lg:col-span-2">
            <ScoresByType summary={s} loading={summary.isLoading} colorOf={colorOf} />
          </Card>
          <Card className="min-w-0 overflow-hidden p-5">
            <OverTime
              summary={s}
              loading={summary.isLoading}
              colorOf={colorOf}
              type={params.get("type") ?? undefined}
              onType={(t) => setParam("type", t)}
            />
          </Card>
          <Card className="min-w-0 overflow-hidden p-5">
            <Comparison
              summary={s}
              loading={summary.isLoading}
              colorOf={colorOf}
              picked={picked}
              // Built on the last query asked for, not the rendered one: a second model clicked before
              // the first click's URL has rendered adds to it rather than replacing it.
              onToggle={(model) =>
                writeParams((next) => {
                  const chosen = chosenModels(next.get("compare")?.split(",").filter(Boolean), s?.models ?? []);
                  const after = chosen.includes(model) ? chosen.filter((m) => m !== model) : [...chosen, model];
                  if (after.length > 0) next.set("compare", after.join(","));
                  else next.delete("compare");
                })
              }
            />
          </Card>
          {s && compared.length >= 2 ? (
            <Card className="min-w-0 overflow-hidden p-5 lg:col-span-2">
              <SuiteScores summary={s} chosen={compared} />
            </Card>
          ) : null}
          {s?.truncated ? (
            <p className="text-xs text-muted-foreground lg:col-span-2">
              More than {s.results_read.toLocaleString()} results in this window: the charts show the newest{" "}
              {s.results_read.toLocaleString()}.
            </p>
          ) : null}
        </div>
      )}
      <h2 className="mb-3 mt-8 text-lg font-semibold">Recent results</h2>
      <DataTable
        caption="Benchmark results, newest run first"
        columns={RESULT_COLUMNS}
        data={results.data?.pages.flatMap((p) => p.data) ?? []}
        loading={results.isLoading}
        error={results.error?.message ?? null}
        empty="No benchmark results yet."
        hasMore={results.hasNextPage}
        onMore={() => void results.fetchNextPage()}
      />
    </>
  );
}

function EmptyBenchmarks({ days }: { days: number }) {
  return (
    <Card className="p-6">
      <h2 className="font-semibold">No benchmark results in the last {days} days</h2>
      <p className="mt-1 max-w-prose text-sm text-muted-foreground">
        Submit a suite&apos;s score for a model of the catalogue from your CI job or evaluation harness, with an API key
        holding <Mono>svc_api:benchmarks:write</Mono>. Scores run from 0 to 100; results of the same suite over time
        become a trend here, and models can be compared side by side.
      </p>
      <pre className="mt-4 overflow-x-auto rounded-md bg-muted p-3 text-xs" tabIndex={0} aria-label="Example request">
        {`curl -X POST "$SVC_URL/v1/reasoning/benchmarks" \\
  -H "Authorization: Bearer $SVC_API_KEY" -H "Content-Type: application/json" \\
  -d '{"model_id": "gpt-4o-mini", "benchmark_type": "math", "benchmark_suite": "gsm8k",
       "score": 87.5, "test_cases_passed": 1154, "test_cases_total": 1319}'`}
      </pre>
    </Card>
  );
}

type ChartProps = { summary: Summary | undefined; loading: boolean; colorOf: (model: string) => string };

const modelSeries = (models: string[], colorOf: (m: string) => string): Series<string>[] =>
  models.map((m) => ({ key: m, label: m, color: colorOf(m) }));

/** Rows of `category` → each model's score, for the bar and radar charts. */
function byTypeRows(summary: Summary, models: string[]) {
  return summary.benchmark_types.map((type) => {
    const row: Record<string, string | number | null> = { type };
    for (const m of models)
      row[m] = summary.scores.find((x) => x.model_id === m && x.benchmark_type === type)?.score ?? null;
    return row;
  });
}

function ScoresByType({ summary, loading, colorOf }: ChartProps) {
  const models = summary?.models ?? [];
  const rows = summary ? byTypeRows(summary, models) : [];
  return (
    <>
      <ChartFigure
        title="Scores by benchmark type"
        summary="Each model's latest score per suite, averaged over the type's suites"
        loading={loading}
        height={240}
        table={{
          head: ["Model", "Benchmark type", "Score", "Best run", "Runs", "Suites"],
          rows: (summary?.scores ?? []).map((x) => [
            x.model_id,
            x.benchmark_type,
            score(x.score),
            score(x.best_score),
            x.runs,
            x.suites.join(", "),
          ]),
        }}
      >
        <GroupedBarChart data={rows} x="type" series={modelSeries(models, colorOf)} formatValue={score} />
      </ChartFigure>
      <Legend items={models.map((m) => ({ label: m, color: colorOf(m) }))} />
    </>
  );
}

function OverTime({
  summary,
  loading,
  colorOf,
  type: wanted,
  onType,
}: ChartProps & { type: string | undefined; onType(type: string | undefined): void }) {
  const types = summary?.benchmark_types ?? [];
  const type = wanted && types.includes(wanted) ? wanted : types[0];
  const points = (summary?.series ?? []).filter((p) => p.benchmark_type === type);
  const models = [...new Set(points.map((p) => p.model_id))].sort();
  const rows = [...new Set(points.map((p) => p.day))].map((day) => {
    const row: Record<string, string | number | null> = { day };
    for (const m of models) row[m] = points.find((p) => p.day === day && p.model_id === m)?.score ?? null;
    return row;
  });
  return (
    <>
      <div className="mb-3 flex flex-wrap items-center gap-2">
        <Label htmlFor="over-time-type" className="text-muted-foreground">
          Benchmark type
        </Label>
        <NativeSelect
          id="over-time-type"
          value={type ?? ""}
          onChange={(e) => onType(e.target.value || undefined)}
          className="w-auto min-w-32"
          disabled={types.length === 0}
        >
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </NativeSelect>
      </div>
      <ChartFigure
        title={`Over time${type ? `: ${type}` : ""}`}
        summary="Mean score per day"
        loading={loading}
        height={220}
        table={{
          head: ["Day", ...models],
          rows: rows.map((r) => [String(r.day), ...models.map((m) => (r[m] === null ? "–" : score(Number(r[m]))))]),
        }}
      >
        <TrendLineChart data={rows} x="day" series={modelSeries(models, colorOf)} formatX={dayLabel} />
      </ChartFigure>
      <Legend items={models.map((m) => ({ label: m, color: colorOf(m) }))} />
    </>
  );
}

/** The models compared: by default the first three; a shared link names its own (up to six). */
function chosenModels(picked: string[] | undefined, all: string[]): string[] {
  return (picked?.filter((m) => all.includes(m)) ?? all.slice(0, 3)).slice(0, 6);
}

function Comparison({
  summary,
  loading,
  colorOf,
  picked,
  onToggle,
}: ChartProps & { picked: string[] | undefined; onToggle(model: string): void }) {
  const all = summary?.models ?? [];
  const chosen = chosenModels(picked, all);
  const rows = summary ? byTypeRows(summary, chosen) : [];
  const comparable = chosen.length >= 2;
  return (
    <>
      <fieldset>
        <legend className="text-sm font-semibold">Compare models</legend>
        <p className="text-xs text-muted-foreground">Pick two or more (up to six).</p>
        <div className="mt-2 flex flex-wrap gap-2">
          {all.map((m) => {
            const on = chosen.includes(m);
            return (
              <button
                key={m}
                type="button"
                aria-pressed={on}
                disabled={!on && chosen.length >= 6}
                onClick={() => onToggle(m)}
                className={cn(
                  "inline-flex max-w-full items-center gap-1.5 rounded-full border px-2.5 py-1 text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-50",
                  on ? "border-foreground/40 bg-muted font-medium" : "border-border text-muted-foreground",
                )}
              >
                <span
                  aria-hidden
                  className="inline-block h-2.5 w-2.5 shrink-0 rounded-sm"
                  style={{ background: on ? colorOf(m) : "transparent", border: `2px solid ${colorOf(m)}` }}
                />
                <span className="truncate">{m}</span>
              </button>
            );
          })}
        </div>
      </fieldset>
      {!loading && !comparable ? (
        <p className="mt-4 text-sm text-muted-foreground">
          {all.length < 2 ? "Only one model has results in this window." : "Pick at least two models to compare."}
        </p>
      ) : (
        <>
          <div className="mt-4">
            <ChartFigure
              title="Side by side"
              summary="Score per benchmark type"
              loading={loading}
              height={240}
              table={{
                head: ["Benchmark type", ...chosen],
                rows: rows.map((r) => [
                  String(r.type),
                  ...chosen.map((m) => (r[m] === null ? "–" : score(Number(r[m])))),
                ]),
              }}
            >
              {(summary?.benchmark_types.length ?? 0) >= 3 ? (
                <ComparisonRadarChart data={rows} category="type" series={modelSeries(chosen, colorOf)} />
              ) : (
                <GroupedBarChart data={rows} x="type" series={modelSeries(chosen, colorOf)} formatValue={score} />
              )}
            </ChartFigure>
            <Legend items={chosen.map((m) => ({ label: m, color: colorOf(m) }))} />
          </div>
        </>
      )}
    </>
  );
}

/**
 * The compared models' latest score per suite, in a card of the page's full width: one column per
 * model (up to six), which a half-width card clipped at 1280 px.
 */
function SuiteScores({ summary, chosen }: { summary: Summary; chosen: string[] }) {
  const suites = [...new Set(summary.suites.map((x) => `${x.benchmark_type}\u0000${x.benchmark_suite}`))]
    .sort()
    .map((k) => {
      const [type, suite] = k.split("\u0000") as [string, string];
      const scores = chosen.map(
        (m) =>
          summary.suites.find((x) => x.model_id === m && x.benchmark_type === type && x.benchmark_suite === suite)
            ?.score ?? null,
      );
      return { type, suite, scores };
    });
  return (
    <>
      <h2 className="text-sm font-semibold">Scores per suite</h2>
      <div
        className="relative mt-3 overflow-x-auto rounded-md border border-border"
        tabIndex={0}
        role="region"
        aria-label="Scores per suite"
      >
        <table className="w-full text-sm">
          <caption className="sr-only">Each compared model&apos;s latest score per suite; the best is marked</caption>
          <thead className="bg-muted text-left text-xs uppercase tracking-wide text-muted-foreground">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">
                Suite
              </th>
              {chosen.map((m) => (
                <th key={m} scope="col" className="whitespace-nowrap px-3 py-2 text-right font-medium normal-case">
                  {m}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {suites.map((row) => {
              const best = Math.max(...row.scores.map((x) => x ?? -1));
              return (
                <tr key={`${row.type}/${row.suite}`} className="border-t border-border">
                  <th scope="row" className="px-3 py-2 text-left font-normal">
                    <span className="font-medium">{row.suite}</span>{" "}
                    <span className="text-xs text-muted-foreground">{row.type}</span>
                  </th>
                  {row.scores.map((x, i) => (
                    <td key={chosen[i]} className="px-3 py-2 text-right tabular-nums">
                      {x === null ? (
                        <span className="text-muted-foreground">–</span>
                      ) : x === best && row.scores.filter((y) => y !== null).length > 1 ? (
                        <span className="font-semibold text-success">
                          {score(x)}
                          <span className="sr-only"> (best)</span>
                        </span>
                      ) : (
                        score(x)
                      )}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}

const RESULT_COLUMNS: ColumnDef<Result, unknown>[] = [
  {
    header: "Run",
    cell: ({ row }) => (
      <time dateTime={row.original.run_at} title={row.original.run_at} className="whitespace-nowrap">
        {ago(row.original.run_at)}
      </time>
    ),
  },
  { header: "Model", cell: ({ row }) => <span className="whitespace-nowrap">{row.original.model_id}</span> },
  { header: "Type", accessorKey: "benchmark_type" },
  { header: "Suite", accessorKey: "benchmark_suite" },
  {
    header: "Score",
    cell: ({ row }) => <span className="tabular-nums">{score(row.original.score)}</span>,
  },
  {
    header: "Cases",
    cell: ({ row }) =>
      row.original.test_cases_total === null ? (
        <span className="text-muted-foreground">–</span>
      ) : (
        <span className="whitespace-nowrap tabular-nums">
          {row.original.test_cases_passed ?? "?"} / {row.original.test_cases_total}
        </span>
      ),
  },
  { header: "Run by", cell: ({ row }) => <Mono>{row.original.run_by}</Mono> },
];
