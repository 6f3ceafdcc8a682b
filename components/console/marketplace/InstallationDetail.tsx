"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { CheckCircle2, Pause, Play, Send, Trash2 } from "lucide-react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { Controller, useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { ChartFigure } from "@/components/charts/ChartFigure";
import { StackedBarChart } from "@/components/charts/StackedBarChart";
import { SERIES } from "@/components/charts/series";
import { BackLink } from "@/components/ui/back-link";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, NativeSelect } from "@/components/ui/primitives";
import { Skeleton } from "@/components/ui/skeleton";
import { InvokeRequest } from "@/server/marketplace/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "../ConsoleShell";
import { JsonBlock, when } from "../executionFormat";
import { StatusBadge } from "../format";
import { applyProblem, problemOf, useTRPC } from "../Providers";
import type { Connector } from "./ConnectorPage";
import { ConnectorIcon, HealthStatus, usd } from "./marketplaceFormat";
import { fieldMessages, formable, schemaDefaults, SchemaForm, type ObjectSchema } from "./SchemaForm";

type Installation = inferRouterOutputs<AppRouter>["marketplace"]["installation"];
type InvokeResult = inferRouterOutputs<AppRouter>["marketplace"]["invoke"];

const dayLabel = (d: string) =>
  new Date(`${d}T00:00:00Z`).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * One installation: its state (suspend, resume, uninstall), health, the configuration it runs
 * with, its 30-day usage charted from the invocation records, and a form to invoke one of its
 * actions, the answer shown with the provenance record that covers the call. Coming back from
 * the provider's consent screen lands here (`?oauth=connected`, or `?oauth=failed&reason=`).
 */
export function InstallationDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const queryClient = useQueryClient();
  const canAdminister = useCanAdminister();
  const installation = useQuery(trpc.marketplace.installation.queryOptions({ id }));
  const usage = useQuery(trpc.marketplace.usage.queryOptions({ id }));
  const i = installation.data;
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.marketplace.installation.queryKey({ id }) });
    void queryClient.invalidateQueries({ queryKey: trpc.marketplace.usage.queryKey({ id }) });
    void queryClient.invalidateQueries({ queryKey: trpc.marketplace.installations.pathKey() });
  };
  const update = useMutation(
    trpc.marketplace.updateInstallation.mutationOptions({
      onSuccess: (out) => {
        toast.success(out.status === "suspended" ? "Installation suspended" : "Installation resumed");
        refresh();
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const uninstall = useMutation(
    trpc.marketplace.uninstall.mutationOptions({
      onSuccess: () => {
        toast.success("Uninstalled");
        refresh();
        router.push("/marketplace/installations");
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const oauth = params.get("oauth");
  const connected = oauth === "connected";
  // A pending, failed or expired authorization is not an installation yet: its state says where it stands.
  const state = useQuery({
    ...trpc.marketplace.installationState.queryOptions({ id }),
    enabled: oauth === "failed" || !!installation.error,
  });
  return (
    <>
      <BackLink href="/marketplace/installations">Installations</BackLink>
      {installation.error ? (
        state.data ? (
          <div role="alert" className="space-y-2 rounded-md border border-destructive/40 bg-destructive/10 p-4 text-sm">
            <p className="font-medium">
              {state.data.status === "pending_oauth"
                ? "Waiting for the provider's consent."
                : `The authorization did not complete: the installation is ${state.data.status}.`}
            </p>
            {state.data.detail || params.get("reason") ? (
              <p>Reason: {state.data.detail ?? params.get("reason")}</p>
            ) : null}
            {state.data.expires_at ? <p>The authorization link works until {when(state.data.expires_at)}.</p> : null}
            <Link
              href={`/marketplace/${encodeURIComponent(state.data.connector_id)}`}
              className="inline-block text-primary underline-offset-2 hover:underline"
            >
              Install again
            </Link>
          </div>
        ) : (
          <p role="alert" className="text-sm text-destructive">
            {problemOf(installation.error).detail}
          </p>
        )
      ) : !i ? (
        <Skeleton className="h-40 w-full" />
      ) : (
        <>
          <PageHeader
            title={i.connector.name}
            description={i.installation_id}
            actions={
              canAdminister && i.status !== "uninstalled" ? (
                <div className="flex flex-wrap gap-2">
                  {i.status === "active" ? (
                    <Button
                      variant="outline"
                      disabled={update.isPending}
                      onClick={() => update.mutate({ id, status: "suspended" })}
                    >
                      <Pause className="h-4 w-4" aria-hidden /> Suspend
                    </Button>
                  ) : (
                    <Button
                      variant="outline"
                      disabled={update.isPending}
                      onClick={() => update.mutate({ id, status: "active" })}
                    >
                      <Play className="h-4 w-4" aria-hidden /> Resume
                    </Button>
                  )}
                  <Confirm
                    trigger={
                      <Button variant="destructive" disabled={uninstall.isPending}>
                        <Trash2 className="h-4 w-4" aria-hidden /> Uninstall
                      </Button>
                    }
                    title={`Uninstall ${i.connector.name}?`}
                    description="Final: its tokens are revoked at the provider where it offers revocation, and it can no longer be invoked. Its usage stays on record."
                    confirmLabel="Uninstall"
                    onConfirm={() => uninstall.mutate({ id })}
                  />
                </div>
              ) : undefined
            }
          />
          {connected && i.status === "active" ? (
            <p
              role="status"
              className="mb-4 flex items-center gap-2 rounded-md border border-success/40 bg-success/10 p-3 text-sm"
            >
              <CheckCircle2 className="h-4 w-4 text-success" aria-hidden />
              Connected to {i.connector.provider}: the consent was given and the installation is active.
            </p>
          ) : null}
          <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
            <div className="min-w-0 space-y-6">
              <Usage usage={usage.data} loading={usage.isPending} />
              {i.status === "active" && canAdminister ? <InvokeForm installation={i} onDone={refresh} /> : null}
              {i.status !== "active" ? (
                <p className="text-sm text-muted-foreground">
                  The installation is {i.status}: it cannot be invoked{i.status === "suspended" ? " until resumed" : ""}
                  .
                </p>
              ) : null}
            </div>
            <aside>
              <Card className="space-y-3 p-4 text-sm">
                <div className="flex items-center gap-3">
                  <ConnectorIcon name={i.connector.name} src={i.connector.icon_url} size={40} />
                  <Link
                    href={`/marketplace/${encodeURIComponent(i.connector.connector_id)}`}
                    className="font-medium text-primary underline-offset-2 hover:underline"
                  >
                    {i.connector.name}
                  </Link>
                </div>
                <dl className="grid grid-cols-[7.5rem_1fr] gap-x-2 gap-y-1.5">
                  <dt className="text-muted-foreground">Status</dt>
                  <dd>
                    <StatusBadge status={i.status} />
                  </dd>
                  <dt className="text-muted-foreground">Health</dt>
                  <dd>
                    <HealthStatus status={i.health_status} />
                  </dd>
                  <dt className="text-muted-foreground">Deployment</dt>
                  <dd>{i.deployment_mode}</dd>
                  <dt className="text-muted-foreground">Installed</dt>
                  <dd>{when(i.installed_at)}</dd>
                  <dt className="text-muted-foreground">Installed by</dt>
                  <dd className="break-all font-mono text-xs">{i.installed_by}</dd>
                  <dt className="text-muted-foreground">Permissions</dt>
                  <dd className="flex flex-wrap gap-1">
                    {i.granted_permissions.map((p) => (
                      <Badge key={p}>{p}</Badge>
                    ))}
                  </dd>
                </dl>
                <div>
                  <h2 className="mb-1 font-medium">Configuration</h2>
                  <JsonBlock value={i.config} label="Configuration" />
                </div>
              </Card>
            </aside>
          </div>
        </>
      )}
    </>
  );
}

type Usage = inferRouterOutputs<AppRouter>["marketplace"]["usage"];

/** The 30-day figures and two charts (invocations and cost per day), from the invocation records. */
function Usage({ usage: u, loading }: { usage: Usage | undefined; loading: boolean }) {
  const stats = u?.statistics;
  const days = u?.daily_breakdown ?? [];
  const successRate =
    stats && stats.total_invocations > 0 ? stats.successful_invocations / stats.total_invocations : null;
  const figures: Array<[string, string]> = stats
    ? [
        ["Invocations", String(stats.total_invocations)],
        ["Success rate", successRate === null ? "—" : `${Math.round(successRate * 100)}%`],
        ["Average duration", `${Math.round(stats.average_duration_ms)} ms`],
        ["Cost", usd(stats.total_cost_usd)],
      ]
    : [];
  return (
    <section aria-labelledby="usage-h" className="space-y-3">
      <h2 id="usage-h" className="text-lg font-semibold">
        Usage, last 30 days
      </h2>
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-4">
        {loading
          ? Array.from({ length: 4 }, (_, k) => <Skeleton key={k} className="h-16" />)
          : figures.map(([label, value]) => (
              <Card key={label} className="p-3">
                <dt className="text-xs text-muted-foreground">{label}</dt>
                <dd className="text-xl font-semibold tabular-nums">{value}</dd>
              </Card>
            ))}
      </dl>
      <Card className="grid gap-6 p-4 md:grid-cols-2">
        <ChartFigure
          title="Invocations per day"
          summary={stats ? `${stats.failed_invocations} failed` : undefined}
          loading={loading}
          table={{ head: ["Day", "Invocations"], rows: days.map((d) => [d.date, d.invocations]) }}
        >
          <StackedBarChart
            data={days}
            x="date"
            formatX={dayLabel}
            series={[{ key: "invocations", label: "Invocations", color: SERIES.primary }]}
          />
        </ChartFigure>
        <ChartFigure
          title="Cost per day (USD)"
          summary={stats ? usd(stats.total_cost_usd) : undefined}
          loading={loading}
          table={{ head: ["Day", "Cost (USD)"], rows: days.map((d) => [d.date, d.cost_usd]) }}
        >
          <StackedBarChart
            data={days}
            x="date"
            formatX={dayLabel}
            series={[{ key: "cost_usd", label: "Cost", color: SERIES.warning }]}
          />
        </ChartFigure>
      </Card>
      {stats?.last_invocation_at ? (
        <p className="text-xs text-muted-foreground">Last invocation {when(stats.last_invocation_at)}.</p>
      ) : null}
    </section>
  );
}

const InvokeFields = z.object({
  action: InvokeRequest.shape.action,
  input: InvokeRequest.shape.input.unwrap(),
  // The input as JSON, for an input_schema the generated form cannot show.
  input_json: z.string(),
});

type Action = Connector["actions"][number];

/**
 * Invokes one of the installation's granted actions: its input as a form generated from the
 * action's `input_schema` (or JSON), the answer shown with its status, duration and the link to
 * the provenance record of the call.
 */
function InvokeForm({ installation: i, onDone }: { installation: Installation; onDone(): void }) {
  const trpc = useTRPC();
  const connector = useQuery(trpc.marketplace.connector.queryOptions({ id: i.connector.connector_id }));
  const actions = (connector.data?.actions ?? []).filter((a) => i.granted_permissions.includes(a.id));
  if (actions.length === 0) return connector.isPending ? <Skeleton className="h-40 w-full" /> : null;
  return <InvokeActionForm installation={i} actions={actions} onDone={onDone} />;
}

function InvokeActionForm({
  installation: i,
  actions,
  onDone,
}: {
  installation: Installation;
  actions: Action[];
  onDone(): void;
}) {
  const trpc = useTRPC();
  const form = useForm<z.infer<typeof InvokeFields>>({
    resolver: zodResolver(InvokeFields),
    defaultValues: { action: actions[0]!.id, input: {}, input_json: "{}" },
  });
  // Not a field: the last answer, shown until another action is chosen.
  const [result, setResult] = useState<InvokeResult | null>(null);
  const action = actions.find((a) => a.id === form.watch("action")) ?? actions[0]!;
  const schema = (action.input_schema ?? {}) as ObjectSchema;
  const asForm = formable(schema);
  const invoke = useMutation(
    trpc.marketplace.invoke.mutationOptions({
      onSuccess: (out) => {
        setResult(out);
        onDone();
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  return (
    <section aria-labelledby="invoke-h" className="space-y-3">
      <h2 id="invoke-h" className="text-lg font-semibold">
        Invoke
      </h2>
      <Card className="p-4">
        <form
          className="grid gap-4"
          noValidate
          onSubmit={form.handleSubmit((v) => {
            let input = v.input;
            if (!asForm) {
              try {
                input = JSON.parse(v.input_json) as Record<string, unknown>;
              } catch {
                form.setError("input_json", { message: "Not valid JSON." });
                return;
              }
            }
            invoke.mutate({ id: i.installation_id, action: v.action, input });
          })}
        >
          <FormField
            id="inv-action"
            label="Action"
            description={
              <>
                <code>
                  {action.method} {action.path}
                </code>{" "}
                · {action.description}
              </>
            }
          >
            {(control) => (
              <NativeSelect
                {...control}
                {...form.register("action", {
                  onChange: (e: { target: { value: string } }) => {
                    const next = actions.find((a) => a.id === e.target.value);
                    form.setValue("input", schemaDefaults(next?.input_schema as ObjectSchema));
                    setResult(null);
                    form.clearErrors();
                  },
                })}
              >
                {actions.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.id}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          {asForm ? (
            <Controller
              control={form.control}
              name="input"
              render={({ field }) => (
                <SchemaForm
                  schema={schema}
                  value={field.value}
                  onChange={field.onChange}
                  errors={fieldMessages(errors.input)}
                  idPrefix={`in-${action.id}`}
                />
              )}
            />
          ) : (
            <FormField id="inv-json" label="Input (JSON)" error={errors.input_json?.message}>
              {(control) => (
                <textarea
                  {...control}
                  rows={5}
                  className="w-full rounded-md border border-border bg-card px-3 py-2 font-mono text-xs"
                  {...form.register("input_json")}
                />
              )}
            </FormField>
          )}
          {errors.root?.message ? (
            <p role="alert" className="text-sm text-destructive">
              {errors.root.message}
            </p>
          ) : null}
          <div>
            <Button type="submit" disabled={invoke.isPending}>
              <Send className="h-4 w-4" aria-hidden /> {invoke.isPending ? "Invoking…" : "Invoke"}
            </Button>
          </div>
        </form>
      </Card>
      {result ? (
        <Card className="space-y-2 p-4" aria-live="polite">
          <div className="flex flex-wrap items-center gap-x-4 gap-y-1 text-sm">
            <Badge tone={result.successful ? "success" : "danger"}>
              {result.status_code === null ? "no answer" : `HTTP ${result.status_code}`}
            </Badge>
            <span className="tabular-nums text-muted-foreground">{result.duration_ms} ms</span>
            {/* The record itself (prv_…), not the invocation's usage id (civ_…), which is no record. */}
            <Link
              href={`/provenance?record=${encodeURIComponent(result.provenance_id)}`}
              className="text-primary underline-offset-2 hover:underline"
              data-testid="invocation-record"
            >
              Provenance record <span className="font-mono text-xs">{result.provenance_id}</span>
            </Link>
          </div>
          {result.error ? (
            <p role="alert" className="text-sm text-destructive">
              {result.error.message}
            </p>
          ) : null}
          <JsonBlock value={result.result} label="The provider's answer" />
        </Card>
      ) : null}
    </section>
  );
}
