"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { AlertTriangle, CheckCircle2 } from "lucide-react";
import Link from "next/link";
import { ChartFigure, Legend } from "@/components/charts/ChartFigure";
import { DonutChart } from "@/components/charts/DonutChart";
import { StackedBarChart } from "@/components/charts/StackedBarChart";
import { SERIES } from "@/components/charts/series";
import { Badge, Card } from "@/components/ui/primitives";
import { Skeleton } from "@/components/ui/skeleton";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { useTRPC } from "./Providers";
import { usePassportNames } from "./usePassportNames";

type Dashboard = inferRouterOutputs<AppRouter>["overview"]["dashboard"];

const EXECUTION_PARTS = [
  { key: "completed", label: "Completed", color: SERIES.allowed },
  { key: "failed", label: "Failed", color: SERIES.refused },
  { key: "cancelled", label: "Cancelled", color: SERIES.neutral },
  { key: "processing", label: "Running", color: SERIES.primary },
  { key: "queued", label: "Queued", color: SERIES.warning },
] as const;

const hourLabel = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
const percent = (n: number) => `${Math.round(n * 100)} %`;

/** The platform's dashboard: calls, executions, webhooks, the ledger, what needs attention, what happened. */
export function Overview() {
  const trpc = useTRPC();
  const me = useQuery(trpc.members.me.queryOptions());
  const dashboard = useQuery(trpc.overview.dashboard.queryOptions());
  // What happened, not the console's own page views (as the provenance explorer hides them).
  const recent = useQuery(trpc.provenance.list.queryOptions({ limit: 8, console_reads: "exclude" }));
  const nameOf = usePassportNames();
  const d = dashboard.data;
  const loading = dashboard.isLoading;
  return (
    <>
      <PageHeader
        title={`Welcome${me.data?.display_name ? `, ${me.data.display_name}` : ""}`}
        description={me.data ? `${me.data.org_name} · signed in as ${me.data.role}` : undefined}
      />
      {dashboard.error ? (
        <p role="alert" className="mb-4 text-sm text-destructive">
          The dashboard could not be loaded: {dashboard.error.message}
        </p>
      ) : null}
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
        <Card className="p-5 lg:col-span-2">
          <CallsChart calls={d?.calls_per_hour ?? null} loading={loading} />
        </Card>
        <Card className="p-5">
          <ExecutionsChart executions={d?.executions ?? null} loading={loading} />
        </Card>
        <Card className="p-5">
          <WebhooksChart webhooks={d?.webhooks ?? null} loading={loading} />
        </Card>
        <Card className="p-5">
          <LedgerPanel ledger={d?.ledger ?? null} loading={loading} />
        </Card>
        <Card className="p-5">
          <Attention dashboard={d} loading={loading} />
        </Card>
      </div>
      <Card className="mt-4 p-5">
        <h2 className="font-semibold">Recent activity</h2>
        {recent.isLoading ? (
          <div className="mt-3 space-y-3" data-testid="activity-skeleton">
            {Array.from({ length: 4 }, (_, i) => (
              <Skeleton key={i} className="h-5 w-full" />
            ))}
          </div>
        ) : (recent.data?.data.length ?? 0) === 0 ? (
          <p className="mt-2 text-sm text-muted-foreground">
            Nothing yet: calls to the API and the console&apos;s changes appear here.
          </p>
        ) : (
          <ul className="mt-2 divide-y divide-border text-sm">
            {(recent.data?.data ?? []).map((r) => (
              <li key={r.id} className="flex flex-wrap items-center justify-between gap-x-3 gap-y-1 py-2">
                <span className="flex min-w-0 items-center gap-2">
                  <StatusBadge status={r.decision} />
                  <span className="min-w-0 truncate font-mono text-xs">{r.operation}</span>
                </span>
                <span className="flex min-w-0 items-center gap-2">
                  <Did value={r.actor_did} name={nameOf(r.actor_did)} truncate />
                  <span className="whitespace-nowrap text-xs text-muted-foreground">{ago(r.timestamp)}</span>
                </span>
              </li>
            ))}
          </ul>
        )}
        <Link href="/provenance" className="mt-3 inline-block text-sm text-primary underline underline-offset-2">
          All records
        </Link>
      </Card>
    </>
  );
}

function CallsChart({ calls, loading }: { calls: Dashboard["calls_per_hour"]; loading: boolean }) {
  if (!loading && calls === null) return <NotVisible what="Calls per hour" />;
  const rows = calls ?? [];
  const allowed = rows.reduce((n, r) => n + r.allowed, 0);
  const refused = rows.reduce((n, r) => n + r.refused, 0);
  return (
    <>
      <ChartFigure
        title="Calls per hour, last 24 hours"
        summary={loading ? undefined : `${allowed + refused} calls · ${refused} refused`}
        loading={loading}
        table={{
          head: ["Hour", "Allowed", "Refused"],
          rows: rows.map((r) => [hourLabel(r.hour), r.allowed, r.refused]),
        }}
      >
        <StackedBarChart
          data={rows}
          x="hour"
          formatX={hourLabel}
          series={[
            { key: "allowed", label: "Allowed", color: SERIES.allowed },
            { key: "refused", label: "Refused", color: SERIES.refused },
          ]}
        />
      </ChartFigure>
      {loading ? null : (
        <div className="flex flex-wrap items-baseline justify-between gap-x-4">
          <Legend
            items={[
              { label: "Allowed", color: SERIES.allowed, value: allowed },
              { label: "Refused", color: SERIES.refused, value: refused },
            ]}
          />
          {refused > 0 ? (
            <p className="mt-2 text-xs text-muted-foreground">
              {refused} refused:{" "}
              <Link
                href="/provenance?decision=denied"
                className="font-medium text-primary underline underline-offset-2"
              >
                see them in Provenance
              </Link>
            </p>
          ) : null}
        </div>
      )}
    </>
  );
}

function ExecutionsChart({ executions, loading }: { executions: Dashboard["executions"]; loading: boolean }) {
  if (!loading && executions === null) return <NotVisible what="Executions" />;
  const parts = EXECUTION_PARTS.map((p) => ({
    label: p.label,
    color: p.color,
    value: executions?.by_status[p.key] ?? 0,
  }));
  const total = parts.reduce((n, p) => n + p.value, 0);
  const rate = executions?.success_rate ?? null;
  return (
    <>
      <ChartFigure
        title={`Executions, last ${executions?.days ?? 7} days`}
        summary={loading ? undefined : `${total} run${total === 1 ? "" : "s"}`}
        loading={loading}
        height={150}
        table={{ head: ["Status", "Executions"], rows: parts.map((p) => [p.label, p.value]) }}
      >
        <DonutChart
          parts={parts}
          center={
            <>
              <span className="text-2xl font-semibold tabular-nums">{rate === null ? "–" : percent(rate)}</span>
              <span className="text-xs text-muted-foreground">success rate</span>
            </>
          }
        />
      </ChartFigure>
      {loading ? null : (
        <>
          <p className="sr-only">
            Success rate: {rate === null ? "no run has ended" : percent(rate)} (completed of completed and failed).
          </p>
          <Legend
            items={parts
              .filter((p) => p.value > 0 || p.label === "Completed" || p.label === "Failed")
              .map((p) => ({ label: p.label, color: p.color, value: p.value }))}
          />
          <Link href="/executions" className="mt-2 inline-block text-sm text-primary underline underline-offset-2">
            Executions
          </Link>
        </>
      )}
    </>
  );
}

function WebhooksChart({ webhooks, loading }: { webhooks: Dashboard["webhooks"]; loading: boolean }) {
  if (!loading && webhooks === null) return <NotVisible what="Webhooks" />;
  const parts = [
    { label: "Healthy", color: SERIES.allowed, value: webhooks?.active ?? 0 },
    { label: "Failing", color: SERIES.warning, value: webhooks?.failing ?? 0 },
    { label: "Disabled", color: SERIES.refused, value: webhooks?.disabled ?? 0 },
  ];
  const total = parts.reduce((n, p) => n + p.value, 0);
  const sent = webhooks ? webhooks.deliveries_24h.succeeded + webhooks.deliveries_24h.failed : 0;
  return (
    <>
      <ChartFigure
        title="Webhook health"
        summary={loading ? undefined : `${total} webhook${total === 1 ? "" : "s"}`}
        loading={loading}
        height={150}
        table={{ head: ["State", "Webhooks"], rows: parts.map((p) => [p.label, p.value]) }}
      >
        <DonutChart
          parts={parts}
          center={
            <>
              {/* What the ring shows (webhooks by state); the deliveries' rate is the line below. */}
              <span className="text-2xl font-semibold tabular-nums">
                {total === 0 ? "none" : `${webhooks!.active}/${total}`}
              </span>
              <span className="text-xs text-muted-foreground">{total === 0 ? "no webhook yet" : "healthy"}</span>
            </>
          }
        />
      </ChartFigure>
      {loading ? null : (
        <>
          <Legend items={parts.map((p) => ({ label: p.label, color: p.color, value: p.value }))} />
          <p className="mt-2 text-xs text-muted-foreground">
            {sent} deliver{sent === 1 ? "y" : "ies"} in 24 hours, {webhooks?.deliveries_24h.failed ?? 0} failed
            {sent === 0 ? "" : ` (${percent(webhooks!.deliveries_24h.succeeded / sent)} delivered)`} ·{" "}
            <Link href="/webhooks" className="text-primary underline underline-offset-2">
              Webhooks
            </Link>
          </p>
        </>
      )}
    </>
  );
}

function LedgerPanel({ ledger, loading }: { ledger: Dashboard["ledger"]; loading: boolean }) {
  if (!loading && ledger === null) return <NotVisible what="The ledger" />;
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title" className="text-sm font-semibold">
        Latest checkpoint
      </h2>
      {loading || !ledger ? (
        <div className="mt-3 space-y-3" data-testid="ledger-skeleton">
          <Skeleton className="h-9 w-32" />
          <Skeleton className="h-4 w-48" />
          <Skeleton className="h-4 w-40" />
        </div>
      ) : (
        <>
          <div className="mt-3 flex items-center gap-2">
            <span className="text-3xl font-semibold tabular-nums">{ledger.checkpoint_tree_size.toLocaleString()}</span>
            <Badge tone={ledger.status === "in_sync" ? "success" : "warning"}>
              {ledger.status === "in_sync" ? "in sync" : `${ledger.records_behind} behind`}
            </Badge>
          </div>
          <p className="mt-1 text-xs text-muted-foreground">
            records covered, of {ledger.record_count.toLocaleString()} in the ledger
          </p>
          <p className="mt-2 text-sm">
            {ledger.checkpoint_age_seconds === null
              ? "No checkpoint yet."
              : `Signed ${ago(new Date(Date.now() - ledger.checkpoint_age_seconds * 1000).toISOString())}.`}
          </p>
          <Link href="/provenance" className="mt-2 inline-block text-sm text-primary underline underline-offset-2">
            Provenance
          </Link>
        </>
      )}
    </section>
  );
}

function Attention({ dashboard, loading }: { dashboard: Dashboard | undefined; loading: boolean }) {
  const a = dashboard?.attention;
  const behind = dashboard?.ledger && dashboard.ledger.status !== "in_sync" && dashboard.ledger.records_behind > 0;
  const empty =
    a &&
    !a.stalled_queue &&
    a.pending_approvals.length === 0 &&
    a.blocked_workflows.length === 0 &&
    a.failed_executions.length === 0 &&
    a.disabled_webhooks.length === 0 &&
    a.expiring_keys.length === 0 &&
    a.unused_high_risk.length === 0;
  return (
    <section aria-labelledby="attention-title">
      <h2 id="attention-title" className="text-sm font-semibold">
        Needs attention
      </h2>
      {loading || !a ? (
        <div className="mt-3 space-y-3" data-testid="attention-skeleton">
          <Skeleton className="h-4 w-full" />
          <Skeleton className="h-4 w-5/6" />
          <Skeleton className="h-4 w-2/3" />
        </div>
      ) : empty ? (
        <p className="mt-3 flex items-center gap-2 text-sm text-muted-foreground">
          <CheckCircle2 className="h-4 w-4 text-success" aria-hidden /> Nothing: no approval waiting, no failed run this
          week, no disabled webhook, no key about to expire or holding high-risk capabilities it does not use
          {behind ? "" : "."}
        </p>
      ) : (
        <ul className="mt-2 space-y-2 text-sm" data-testid="attention">
          {a.stalled_queue ? (
            // First: while no worker runs, every other item here only grows.
            <AttentionItem
              href="/executions?status=queued"
              label={`Work queued and no worker running: ${a.stalled_queue.due_jobs} job(s) due, ${a.stalled_queue.queued_executions} execution(s) queued`}
              detail={`${
                a.stalled_queue.worker_last_seen_at
                  ? `no worker seen for ${ago(a.stalled_queue.worker_last_seen_at).replace(/ ago$/, "")}`
                  : "no worker has run on this database"
              } · start one (npm run worker), or the server without SVC_IN_PROCESS_WORKER=0`}
            />
          ) : null}
          {a.pending_approvals.map((r) => (
            <AttentionItem
              key={r.id}
              href={`/approvals?id=${r.id}`}
              label={`Approval waiting ${ago(r.created_at).replace(/ ago$/, "")}: ${r.action_description}`}
              detail={[
                `${r.risk_level} risk`,
                r.blocks
                  ? `blocks ${r.blocks.kind === "workflow" ? `workflow ${r.blocks.name ?? r.blocks.id}` : `execution ${r.blocks.id}`}`
                  : null,
              ]
                .filter(Boolean)
                .join(" · ")}
            />
          ))}
          {a.blocked_workflows.map((w) => (
            <AttentionItem
              key={`${w.id}:${w.node}`}
              href={`/workflows/${w.id}`}
              label={`Workflow ${w.name ?? w.id} blocked`}
              detail={[`node ${w.node} waits for ${w.approval_id ?? "an approval"}`, w.since ? ago(w.since) : null]
                .filter(Boolean)
                .join(" · ")}
            />
          ))}
          {a.failed_executions.map((e) => (
            <AttentionItem
              key={e.id}
              href={`/executions/${e.id}`}
              label={`${e.agent_name} failed`}
              detail={[e.error_code, e.completed_at ? ago(e.completed_at) : null].filter(Boolean).join(" · ")}
            />
          ))}
          {a.disabled_webhooks.map((w) => (
            <AttentionItem
              key={w.id}
              href={`/webhooks/${w.id}`}
              label="Webhook disabled"
              detail={`${w.target}${w.reason ? ` · ${w.reason}` : ""}`}
            />
          ))}
          {a.unused_high_risk.map((k) => (
            <AttentionItem
              key={`unused:${k.id}`}
              href={`/keys/${k.id}`}
              label={`Key ${k.name ?? k.id} holds high-risk capabilities it has not used in 30 days`}
              detail={k.unused.join(", ")}
            />
          ))}
          {a.expiring_keys.map((k) => (
            <AttentionItem
              key={k.id}
              href={`/keys/${k.id}`}
              label={`Key ${k.name ?? k.id} expires`}
              detail={ago(k.expires_at)}
            />
          ))}
        </ul>
      )}
      {behind ? (
        <p className="mt-2 text-sm">The latest checkpoint is {dashboard!.ledger!.records_behind} record(s) behind.</p>
      ) : null}
    </section>
  );
}

function AttentionItem({ href, label, detail }: { href: string; label: string; detail: string }) {
  return (
    <li className="flex min-w-0 items-start gap-2">
      <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0 text-warning" aria-hidden />
      <span className="min-w-0">
        {/* A label may carry an unbroken token (a proposal's JSON, an id): it wraps rather than widen the page. */}
        <Link
          href={href}
          className="font-medium text-primary underline-offset-2 [overflow-wrap:anywhere] hover:underline"
        >
          {label}
        </Link>
        {detail ? <span className="block truncate text-xs text-muted-foreground">{detail}</span> : null}
      </span>
    </li>
  );
}

function NotVisible({ what }: { what: string }) {
  return <p className="text-sm text-muted-foreground">{what}: your role does not read these figures.</p>;
}
