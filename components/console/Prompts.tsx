"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { diffLines } from "diff";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { Controller, useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { ChartFigure, Legend } from "@/components/charts/ChartFigure";
import { GroupedBarChart } from "@/components/charts/GroupedBarChart";
import { categoricalColor, SERIES } from "@/components/charts/series";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { DataTable } from "@/components/ui/data-table";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import { PromptRenderRequest } from "@/server/prompts/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { ago } from "./format";
import { fieldMessages, SchemaForm, type ObjectSchema } from "./marketplace/SchemaForm";
import { applyProblem, problemOf, useTRPC } from "./Providers";

type Outputs = inferRouterOutputs<AppRouter>["prompts"];
type Profile = Outputs["list"]["data"][number];
type Version = Outputs["versions"]["data"][number];
type HistoryEntry = Outputs["history"]["data"][number];

/**
 * The prompt registry: the organization's prompts, and for the one picked (`?key=` in the URL) its
 * versions with a diff between two of them, a preview rendered from a form generated from the
 * version's input schema, the history of its active-version moves, and how each model serves it.
 */
export function Prompts() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const key = params.get("key") ?? undefined;
  const list = useQuery(trpc.prompts.list.queryOptions({ limit: 100 }));

  return (
    <>
      <PageHeader
        title="Prompts"
        description="Semver-versioned prompts with typed inputs (POST /v1/prompts/{key}/versions), rendered with Mustache, measured per model from the reasoning calls that name them."
      />
      <DataTable
        caption="Prompts, by key"
        columns={PROFILE_COLUMNS}
        data={list.data?.data ?? []}
        loading={list.isLoading}
        error={list.error?.message ?? null}
        empty="No prompts yet. Publish a first version with POST /v1/prompts/{key}/versions."
        onRowClick={(p) => router.replace(`${pathname}?key=${encodeURIComponent(p.prompt_key)}`, { scroll: false })}
      />
      {key ? <PromptDetail key={key} promptKey={key} /> : null}
      <Affinity />
    </>
  );
}

const PROFILE_COLUMNS: ColumnDef<Profile, unknown>[] = [
  {
    header: "Key",
    accessorKey: "prompt_key",
    cell: ({ row }) => (
      <a
        className="font-medium text-primary underline-offset-2 hover:underline"
        href={`/prompts?key=${encodeURIComponent(row.original.prompt_key)}`}
      >
        {row.original.prompt_key}
      </a>
    ),
  },
  { header: "Namespace", accessorKey: "namespace" },
  { header: "Active version", cell: ({ row }) => <Mono>{row.original.active_version}</Mono> },
  { header: "Recommended model", cell: ({ row }) => row.original.recommended_model ?? "—" },
  { header: "Updated", cell: ({ row }) => ago(row.original.updated_at) },
];

function PromptDetail({ promptKey }: { promptKey: string }) {
  const trpc = useTRPC();
  const profile = useQuery(trpc.prompts.get.queryOptions({ key: promptKey }));
  const versions = useQuery(trpc.prompts.versions.queryOptions({ key: promptKey, limit: 100 }));
  const history = useQuery(trpc.prompts.history.queryOptions({ key: promptKey, limit: 50 }));
  const all = versions.data?.data ?? [];
  const queryClient = useQueryClient();
  const canMove = useCanAdminister();
  const active = profile.data?.active_version;
  // The version the last move came from: where a roll back goes (if it can still be active).
  const lastMove = history.data?.data.find((h) => h.change === "active_version" && h.to === active);
  const rollBackTo =
    lastMove?.from && all.some((v) => v.version === lastMove.from && v.status !== "deprecated")
      ? lastMove.from
      : undefined;
  const move = useMutation(
    trpc.prompts.setActiveVersion.mutationOptions({
      onSuccess: (out) => {
        toast.success(`${promptKey}: ${out.active_version} is the active version`);
        void queryClient.invalidateQueries({ queryKey: trpc.prompts.pathKey() });
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const columns: ColumnDef<Version, unknown>[] = [
    ...VERSION_COLUMNS.slice(0, 1),
    { header: "Status", cell: ({ row }) => <VersionStatus version={row.original} active={active} /> },
    ...VERSION_COLUMNS.slice(1),
    ...(canMove
      ? [
          {
            header: "Active version",
            cell: ({ row }: { row: { original: Version } }) =>
              row.original.version !== active && row.original.status !== "deprecated" ? (
                <Confirm
                  trigger={
                    <Button size="sm" variant="outline" disabled={move.isPending}>
                      Make {row.original.version} active
                    </Button>
                  }
                  title={`Make ${row.original.version} the active version?`}
                  description={`Renders and reasoning calls that name ${promptKey} without a version get ${row.original.version} instead of ${active ?? "the current one"}. The move is recorded in the history and can be rolled back.`}
                  confirmLabel={`Make ${row.original.version} active`}
                  onConfirm={() => move.mutate({ key: promptKey, version: row.original.version })}
                />
              ) : null,
          } satisfies ColumnDef<Version, unknown>,
        ]
      : []),
  ];

  return (
    <section aria-labelledby="prompt-title" className="mt-8">
      <h2 id="prompt-title" className="text-lg font-semibold">
        {promptKey}{" "}
        {profile.data ? (
          <span className="text-sm font-normal text-muted-foreground">
            <Mono>{profile.data.prompt_uri}</Mono> · active <Mono>{profile.data.active_version}</Mono>
          </span>
        ) : null}
      </h2>
      <p className="mt-1 text-sm text-muted-foreground">
        Publishing a version does not make it active (only a prompt&apos;s first version is): calls without a version
        get the active one until it is moved.
      </p>
      {canMove && rollBackTo ? (
        <div className="mt-2">
          <Confirm
            trigger={
              <Button size="sm" variant="outline" disabled={move.isPending}>
                Roll back to {rollBackTo}
              </Button>
            }
            title={`Roll back ${promptKey} to ${rollBackTo}?`}
            description={`The active version moves back from ${active} to ${rollBackTo}, the version it was moved from. The move is recorded in the history.`}
            confirmLabel={`Roll back to ${rollBackTo}`}
            onConfirm={() => move.mutate({ key: promptKey, version: rollBackTo })}
          />
        </div>
      ) : null}
      {profile.error ? (
        <p role="alert" className="mt-2 text-sm text-destructive">
          {profile.error.message}
        </p>
      ) : null}
      <h3 className="mb-3 mt-6 font-semibold">Versions</h3>
      <DataTable
        caption={`Versions of ${promptKey}, newest first`}
        columns={columns}
        data={all}
        loading={versions.isLoading}
        error={versions.error?.message ?? null}
        empty="No versions."
      />
      <div className="mt-4 grid grid-cols-1 gap-4 lg:grid-cols-2">
        <Card className="min-w-0 p-5">
          {/* Mounted once the versions are in: its two pickers start from the newest two. */}
          {all.length > 0 ? <VersionDiff versions={all} /> : null}
        </Card>
        <Card className="min-w-0 p-5">
          {profile.data && all.length > 0 ? (
            <RenderPreview promptKey={promptKey} versions={all} active={profile.data.active_version} />
          ) : null}
        </Card>
      </div>
      <h3 className="mb-3 mt-6 font-semibold">History</h3>
      <DataTable
        caption={`Active-version moves and deprecations of ${promptKey}, newest first`}
        columns={HISTORY_COLUMNS}
        data={history.data?.data ?? []}
        loading={history.isLoading}
        error={history.error?.message ?? null}
        empty="No moves yet."
      />
      <Card className="mt-4 min-w-0 overflow-hidden p-5">
        <Performance promptKey={promptKey} />
      </Card>
    </section>
  );
}

const VERSION_COLUMNS: ColumnDef<Version, unknown>[] = [
  { header: "Version", cell: ({ row }) => <Mono>{row.original.version}</Mono> },
  { header: "Extends", cell: ({ row }) => (row.original.extends_uri ? <Mono>{row.original.extends_uri}</Mono> : "—") },
  { header: "Published", cell: ({ row }) => ago(row.original.published_at) },
];

/**
 * A version's state as people mean it: the API's `status` only says whether a version may still be
 * made active ("active" until deprecated); the one active version is the profile's `active_version`.
 */
function VersionStatus({ version, active }: { version: Version; active: string | undefined }) {
  if (version.status === "deprecated") return <Badge tone="warning">deprecated</Badge>;
  if (version.version === active) return <Badge tone="success">active</Badge>;
  return <Badge tone="neutral">published</Badge>;
}

const HISTORY_COLUMNS: ColumnDef<HistoryEntry, unknown>[] = [
  { header: "Change", accessorKey: "change" },
  { header: "From", cell: ({ row }) => (row.original.from ? <Mono>{row.original.from}</Mono> : "—") },
  { header: "To", cell: ({ row }) => (row.original.to ? <Mono>{row.original.to}</Mono> : "—") },
  { header: "Source", accessorKey: "source" },
  {
    header: "Request or proposal",
    cell: ({ row }) => <Mono>{row.original.proposal_id ?? row.original.request_id ?? "—"}</Mono>,
  },
  { header: "When", cell: ({ row }) => ago(row.original.at) },
];

/** Two versions' templates, line by line (jsdiff): removed lines struck, added ones marked. */
function VersionDiff({ versions }: { versions: Version[] }) {
  const [from, setFrom] = useState(versions[1]?.version ?? versions[0]?.version ?? "");
  const [to, setTo] = useState(versions[0]?.version ?? "");
  const a = versions.find((v) => v.version === from);
  const b = versions.find((v) => v.version === to);
  const parts = a && b ? diffLines(a.content, b.content) : [];
  const select = (id: string, label: string, value: string, onChange: (v: string) => void) => (
    <div className="grid gap-1">
      <Label htmlFor={id}>{label}</Label>
      <NativeSelect id={id} value={value} onChange={(e) => onChange(e.target.value)} className="w-36">
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
          </option>
        ))}
      </NativeSelect>
    </div>
  );
  return (
    <>
      <h3 className="font-semibold">Diff</h3>
      <div className="mt-3 flex flex-wrap gap-3">
        {select("diff-from", "From", from, setFrom)}
        {select("diff-to", "To", to, setTo)}
      </div>
      <pre
        className="mt-3 max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-md bg-muted p-3 text-xs"
        tabIndex={0}
        aria-label={`Diff from ${from} to ${to}`}
        data-testid="version-diff"
      >
        {parts.map((p, i) =>
          p.added ? (
            <ins key={i} className="bg-success/15 text-foreground no-underline" aria-label="added">
              {prefixLines(p.value, "+ ")}
            </ins>
          ) : p.removed ? (
            <del key={i} className="bg-destructive/15 text-foreground" aria-label="removed">
              {prefixLines(p.value, "- ")}
            </del>
          ) : (
            <span key={i}>{prefixLines(p.value, "  ")}</span>
          ),
        )}
      </pre>
    </>
  );
}

// Every part ends its last line: a template without a final newline would otherwise run into the next part.
const prefixLines = (text: string, prefix: string) =>
  (text.endsWith("\n") ? text : `${text}\n`)
    .split("\n")
    .map((line, i, all) => (i === all.length - 1 && line === "" ? "" : `${prefix}${line}`))
    .join("\n");

const PreviewForm = z.object({
  version: PromptRenderRequest.shape.version.unwrap(),
  inputs: PromptRenderRequest.shape.inputs.unwrap(),
});

/** A form from the version's input schema (one field per top-level property), and what it renders. */
function RenderPreview({ promptKey, versions, active }: { promptKey: string; versions: Version[]; active: string }) {
  const trpc = useTRPC();
  const form = useForm<z.infer<typeof PreviewForm>>({
    resolver: zodResolver(PreviewForm),
    defaultValues: { version: active, inputs: {} },
  });
  const version = form.watch("version");
  const chosen = versions.find((v) => v.version === version) ?? versions[0]!;
  const schema = (chosen.input_schema ?? { type: "object", properties: {} }) as ObjectSchema;
  const render = useMutation(trpc.prompts.render.mutationOptions({ onError: (e) => applyProblem(form, e) }));
  const errors = form.formState.errors;
  return (
    <>
      <h3 className="font-semibold">Preview</h3>
      <form className="mt-3 grid gap-4" onSubmit={form.handleSubmit((v) => render.mutate({ key: promptKey, ...v }))}>
        <FormField id="preview-version" label="Version" className="space-y-1">
          {(control) => (
            <NativeSelect
              {...control}
              className="w-36"
              {...form.register("version", {
                onChange: () => {
                  render.reset();
                  form.clearErrors();
                },
              })}
            >
              {versions.map((v) => (
                <option key={v.version} value={v.version}>
                  {v.version}
                  {v.version === active ? " (active)" : ""}
                </option>
              ))}
            </NativeSelect>
          )}
        </FormField>
        <Controller
          control={form.control}
          name="inputs"
          render={({ field }) => (
            <SchemaForm
              schema={schema}
              value={field.value}
              onChange={field.onChange}
              errors={fieldMessages(errors.inputs)}
              idPrefix="preview"
            />
          )}
        />
        <div>
          <Button type="submit" disabled={render.isPending}>
            Render
          </Button>
        </div>
      </form>
      {errors.root?.message ? (
        <p role="alert" className="mt-3 text-sm text-destructive">
          {errors.root.message}
        </p>
      ) : null}
      {render.data ? (
        <pre
          className="mt-3 max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-md bg-muted p-3 text-xs"
          tabIndex={0}
          aria-label={`Rendered ${render.data.prompt_key}@${render.data.version}`}
          data-testid="rendered-text"
        >
          {render.data.text}
        </pre>
      ) : null}
    </>
  );
}

/** Per model that answered the prompt's calls: calls and successes (the table adds latency, cost, tokens). */
function Performance({ promptKey }: { promptKey: string }) {
  const trpc = useTRPC();
  const perf = useQuery(trpc.prompts.performance.queryOptions({ key: promptKey, window_days: 30 }));
  const p = perf.data;
  const rows = (p?.model_breakdown ?? []).map((m) => ({
    model: m.model_id,
    calls: m.call_count,
    succeeded: Math.round(m.call_count * m.success_rate),
  }));
  const most = Math.max(1, ...rows.map((r) => r.calls));
  return (
    <>
      <ChartFigure
        title="Calls per model, last 30 days"
        summary={
          p
            ? `${p.stats.total_calls} calls · ${p.stats.positive_signals} positive, ${p.stats.negative_signals} negative, ${p.stats.rephrases} rephrased, ${p.stats.corrections} corrected · recommended: ${p.recommended_model ?? "none"}`
            : undefined
        }
        loading={perf.isLoading}
        table={{
          head: ["Model", "Provider", "Calls", "Success rate", "Avg latency (ms)", "Avg cost (USD)", "Avg tokens"],
          rows: (p?.model_breakdown ?? []).map((m) => [
            m.model_id,
            m.provider,
            m.call_count,
            `${(m.success_rate * 100).toFixed(1)}%`,
            m.avg_latency_ms,
            m.avg_cost_usd,
            m.avg_tokens,
          ]),
        }}
      >
        <GroupedBarChart
          data={rows}
          x="model"
          domain={[0, most]}
          series={[
            { key: "calls", label: "Calls", color: SERIES.neutral },
            { key: "succeeded", label: "Succeeded", color: SERIES.allowed },
          ]}
        />
      </ChartFigure>
      <Legend
        items={[
          { label: "Calls", color: SERIES.neutral },
          { label: "Succeeded", color: SERIES.allowed },
        ]}
      />
      {p && p.model_breakdown.length === 0 ? (
        <p className="mt-2 text-sm text-muted-foreground">
          No reasoning call has named this prompt in the window. Calls name it with{" "}
          <Mono>{`prompt: {key: "${promptKey}", inputs}`}</Mono> on POST /v1/reasoning/think.
        </p>
      ) : null}
    </>
  );
}

/** Prompt × model affinity (0..1, the README's formula), one bar per model for each prompt. */
function Affinity() {
  const trpc = useTRPC();
  const affinity = useQuery(trpc.prompts.affinity.queryOptions({ limit: 100, window_days: 30 }));
  const data = affinity.data?.data ?? [];
  const models = [...new Set(data.map((d) => d.model_id))].sort();
  const colorOf = (m: string) => categoricalColor(models.indexOf(m));
  const rows = [...new Set(data.map((d) => d.prompt_key))].map((prompt) => {
    const row: Record<string, string | number | null> = { prompt };
    for (const m of models)
      row[m] = data.find((d) => d.prompt_key === prompt && d.model_id === m)?.affinity_score ?? null;
    return row;
  });
  return (
    <Card className="mt-8 min-w-0 overflow-hidden p-5">
      <ChartFigure
        title="Prompt × model affinity, last 30 days"
        summary="0 to 1: success, positive feedback, relative cost and latency; near 0.5 with few calls"
        loading={affinity.isLoading}
        height={220}
        table={{
          head: ["Prompt", "Model", "Provider", "Calls", "Success rate", "Avg latency (ms)", "Affinity"],
          rows: data.map((d) => [
            d.prompt_key,
            d.model_id,
            d.provider,
            d.sample_size,
            `${(d.stats.success_rate * 100).toFixed(1)}%`,
            d.stats.avg_latency_ms,
            d.affinity_score.toFixed(3),
          ]),
        }}
      >
        <GroupedBarChart
          data={rows}
          x="prompt"
          domain={[0, 1]}
          series={models.map((m) => ({ key: m, label: m, color: colorOf(m) }))}
          formatValue={(v) => v.toFixed(3)}
        />
      </ChartFigure>
      <Legend items={models.map((m) => ({ label: m, color: colorOf(m) }))} />
      {affinity.data && data.length === 0 ? (
        <p className="mt-2 text-sm text-muted-foreground">No reasoning call has named a prompt in the window.</p>
      ) : null}
    </Card>
  );
}
