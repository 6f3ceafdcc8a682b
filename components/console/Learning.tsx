"use client";

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Confirm } from "@/components/ui/dialog";
import { Badge, Card, NativeSelect, Label } from "@/components/ui/primitives";
import {
  APPROVAL_STATES,
  parseAffinityWindow,
  parseDelegationUsage,
  PROVENANCE_ID,
  type ApprovalState,
} from "@/server/learning/schemas";
import type { AppRouter } from "@/server/appRouter";
import { jsonDiff } from "./approvalDiff";
import { JsonDiffList } from "./JsonDiffList";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { Did } from "./Did";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

type Proposal = inferRouterOutputs<AppRouter>["learning"]["get"];

const STATE_TONE: Record<ApprovalState, "neutral" | "primary" | "success" | "warning" | "danger"> = {
  none: "neutral",
  pending: "primary",
  approved: "success",
  rejected: "danger",
  applied: "success",
  rolled_back: "warning",
};

export function StateBadge({ state }: { state: ApprovalState }) {
  return (
    <Badge tone={STATE_TONE[state]} className="shrink-0 whitespace-nowrap">
      {state.replace("_", " ")}
    </Badge>
  );
}

/**
 * Learning proposals: the list (filtered by state), and the selected one's change, explain
 * metadata and evidence (records linked to the provenance explorer), with its decision, apply and
 * rollback behind confirmations. The decision is the approval inbox's: approving here answers the
 * same request.
 */
export function Learning() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const state = (params.get("state") ?? "") as ApprovalState | "";
  const selectedId = params.get("id");
  const setParam = (changes: Record<string, string | null>) =>
    writeParams((next) => {
      for (const [k, v] of Object.entries(changes)) {
        if (v) next.set(k, v);
        else next.delete(k);
      }
    });
  const input = { limit: 50, ...(state ? { approval_state: state } : {}) };
  const list = useInfiniteQuery(
    trpc.learning.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.pagination.next_cursor ?? undefined,
      refetchInterval: 5_000,
    }),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const currentId = selectedId ?? rows[0]?.id;

  return (
    <div>
      <PageHeader
        title="Learning"
        description="Proposed changes to prompts, routing and keys' grants, with their evidence. Each passes through the approval inbox, then is applied and can be rolled back."
      />
      <div className="mb-3 flex flex-wrap items-end gap-3">
        <div className="space-y-1">
          <Label htmlFor="learning-state">State</Label>
          <NativeSelect
            id="learning-state"
            value={state}
            onChange={(e) => setParam({ state: e.target.value || null, id: null })}
          >
            <option value="">Any</option>
            {APPROVAL_STATES.filter((s) => s !== "none").map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      {list.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(list.error).detail}
        </p>
      ) : rows.length === 0 && !list.isLoading ? (
        <Card className="p-6 text-sm text-muted-foreground">
          No proposals{state ? ` ${state.replace("_", " ")}` : ""}.
        </Card>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
          <Card className="min-w-0 p-0">
            <ul aria-label="Proposals" className="divide-y divide-border">
              {rows.map((p) => (
                <li
                  key={p.id}
                  className={cn("border-l-4", p.id === currentId ? "border-l-primary" : "border-l-transparent")}
                >
                  <button
                    type="button"
                    onClick={() => setParam({ id: p.id })}
                    aria-current={p.id === currentId ? "true" : undefined}
                    className="w-full min-w-0 p-3 text-left focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                  >
                    <div className="flex items-center gap-2">
                      <StateBadge state={p.approval_state} />
                      <span className="truncate text-sm font-medium">
                        {p.target} · {p.kind.replaceAll("_", " ")}
                      </span>
                    </div>
                    <div className="mt-1 truncate text-xs text-muted-foreground">
                      {p.origin === "worker" ? "proposed by the service" : "proposed"} {ago(p.created_at)} ·{" "}
                      {summary(p.proposed)}
                    </div>
                  </button>
                </li>
              ))}
            </ul>
            {list.hasNextPage ? (
              <div className="p-3">
                <Button
                  size="sm"
                  variant="outline"
                  onClick={() => void list.fetchNextPage()}
                  disabled={list.isFetchingNextPage}
                >
                  Load more
                </Button>
              </div>
            ) : null}
          </Card>
          {currentId ? <ProposalDetail key={currentId} id={currentId} /> : null}
        </div>
      )}
    </div>
  );
}

/** `{recommended_model: "x"}` → `recommended_model: "x"`, short. */
function summary(state: Record<string, unknown>): string {
  const text = Object.entries(state)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(", ");
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function ProposalDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canAdminister = useCanAdminister();
  const detail = useQuery(trpc.learning.get.queryOptions({ id }, { refetchInterval: 5_000 }));
  const done = (verb: string) => async () => {
    toast.success(`Proposal ${verb}`);
    await queryClient.invalidateQueries({ queryKey: trpc.learning.pathKey() });
  };
  const onError = (e: unknown) => toast.error(problemOf(e).detail);
  const approve = useMutation(trpc.learning.approve.mutationOptions({ onSuccess: done("approved"), onError }));
  const reject = useMutation(trpc.learning.reject.mutationOptions({ onSuccess: done("rejected"), onError }));
  const apply = useMutation(trpc.learning.applyChange.mutationOptions({ onSuccess: done("applied"), onError }));
  const rollback = useMutation(trpc.learning.rollback.mutationOptions({ onSuccess: done("rolled back"), onError }));
  const busy = approve.isPending || reject.isPending || apply.isPending || rollback.isPending;

  if (detail.error)
    return (
      <Card className="p-4" role="alert">
        {problemOf(detail.error).detail}
      </Card>
    );
  const p = detail.data;
  if (!p) return <Card className="p-4 text-sm text-muted-foreground">Loading…</Card>;
  const diff = jsonDiff(p.previous, p.proposed);
  const e = p.explain;
  return (
    <Card className="min-w-0 space-y-4 p-4" aria-label="Proposal detail">
      <div className="flex flex-wrap items-center gap-2">
        <StateBadge state={p.approval_state} />
        <h2 className="text-lg font-semibold [overflow-wrap:anywhere]">
          {p.kind.replaceAll("_", " ")} of{" "}
          {p.kind === "delegation_narrowing" ? (
            <Link className="underline underline-offset-2" href={`/keys/${encodeURIComponent(p.target)}`}>
              {p.target}
            </Link>
          ) : (
            p.target
          )}
        </h2>
      </div>
      <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
        <dt className="text-muted-foreground">Proposed by</dt>
        <dd className="min-w-0">
          {p.origin === "worker" ? (
            `the service (${p.kind === "delegation_narrowing" ? "the grant's usage" : "affinity statistics"})`
          ) : (
            <Did value={p.proposed_by} truncate />
          )}
        </dd>
        <dt className="text-muted-foreground">Last change</dt>
        <dd className="min-w-0">
          {ago(p.changed_at)} by <Did value={p.changed_by} truncate />
        </dd>
        <dt className="text-muted-foreground">Approval</dt>
        <dd className="min-w-0 font-mono text-xs [overflow-wrap:anywhere]">
          {p.approval_id ? (
            <Link className="underline underline-offset-2" href={`/approvals?id=${p.approval_id}`}>
              {p.approval_id}
              {p.approval_state === "pending" ? " (in the inbox)" : ""}
            </Link>
          ) : (
            "—"
          )}
        </dd>
        <dt className="text-muted-foreground">Records</dt>
        <dd>
          <Link className="underline underline-offset-2" href={`/provenance?resource=${encodeURIComponent(p.id)}`}>
            This proposal in the provenance explorer
          </Link>
        </dd>
      </dl>

      <section aria-label="Change" className="space-y-1">
        <h3 className="text-sm font-medium">Change</h3>
        <JsonDiffList diff={diff} testId="proposal-diff" empty="No difference from the state it saw." />
      </section>

      <section aria-label="Explanation" className="space-y-1">
        <h3 className="text-sm font-medium">Explanation</h3>
        <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
          <dt className="text-muted-foreground">Source</dt>
          <dd>{e.source ?? "—"}</dd>
          <dt className="text-muted-foreground">Confidence</dt>
          <dd>{e.confidence === undefined ? "—" : `${Math.round(e.confidence * 100)} %`}</dd>
          {e.scope ? (
            <>
              <dt className="text-muted-foreground">Scope</dt>
              <dd className="[overflow-wrap:anywhere]">{e.scope}</dd>
            </>
          ) : null}
          {e.rollback_target ? (
            <>
              <dt className="text-muted-foreground">Rollback target</dt>
              <dd className="[overflow-wrap:anywhere]">{e.rollback_target}</dd>
            </>
          ) : null}
          {e.expiry ? (
            <>
              <dt className="text-muted-foreground">Expires</dt>
              <dd>{ago(e.expiry)}</dd>
            </>
          ) : null}
        </dl>
      </section>

      <section aria-label="Evidence" className="space-y-1">
        <h3 className="text-sm font-medium">Evidence</h3>
        {(e.evidence_refs ?? []).length === 0 ? (
          <p className="text-sm text-muted-foreground">None cited.</p>
        ) : (
          <ul className="space-y-1 text-sm">
            {(e.evidence_refs ?? []).map((ref) => (
              <li key={ref}>
                <Evidence reference={ref} />
              </li>
            ))}
          </ul>
        )}
      </section>

      {p.tuning_actions.length > 0 ? (
        <section aria-label="Tuning actions" className="space-y-1">
          <h3 className="text-sm font-medium">Tuning actions</h3>
          <ul className="space-y-1 text-sm">
            {p.tuning_actions.map((a) => (
              <li key={a.id} className="flex flex-wrap items-center gap-2">
                <Badge tone={a.action === "apply" ? "success" : "warning"}>{a.action}</Badge>
                <span className="text-muted-foreground">{ago(a.created_at)}</span>
                {a.provenance_id ? (
                  <Link
                    className="underline underline-offset-2"
                    href={`/provenance?resource=${encodeURIComponent(p.id)}`}
                  >
                    record
                  </Link>
                ) : null}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {canAdminister ? (
        <div className="flex flex-wrap gap-2">
          {p.approval_state === "pending" ? (
            <>
              <Confirm
                trigger={<Button disabled={busy}>Approve</Button>}
                title="Approve this proposal?"
                description="This answers its request in the approval inbox. The change is made only when someone applies it."
                confirmLabel="Approve"
                onConfirm={() => approve.mutate({ id })}
              />
              <Confirm
                trigger={
                  <Button variant="outline" disabled={busy}>
                    Reject
                  </Button>
                }
                title="Reject this proposal?"
                description="Its approval request is rejected too; the proposal cannot be applied."
                confirmLabel="Reject"
                onConfirm={() => reject.mutate({ id })}
              />
            </>
          ) : null}
          {p.approval_state === "approved" ? (
            <Confirm
              trigger={<Button disabled={busy}>Apply</Button>}
              title="Apply this change?"
              description={`Sets ${summary(p.proposed)} on ${p.target}. It can be rolled back afterwards.`}
              confirmLabel="Apply"
              onConfirm={() => apply.mutate({ id })}
            />
          ) : null}
          {p.approval_state === "applied" ? (
            <Confirm
              trigger={
                <Button variant="outline" disabled={busy}>
                  Roll back
                </Button>
              }
              title="Roll this change back?"
              description={`Restores ${summary(p.previous)} on ${p.target}, exactly as it was before the proposal.`}
              confirmLabel="Roll back"
              onConfirm={() => rollback.mutate({ id })}
            />
          ) : null}
        </div>
      ) : null}
    </Card>
  );
}

/** One evidence reference: a provenance record (linked to the explorer) or a statistics window. */
function Evidence({ reference }: { reference: string }) {
  const trpc = useTRPC();
  const isRecord = PROVENANCE_ID.test(reference);
  const record = useQuery(trpc.provenance.get.queryOptions({ id: reference }, { enabled: isRecord }));
  if (isRecord) {
    const r = record.data;
    const href = r?.resource_id
      ? `/provenance?resource=${encodeURIComponent(r.resource_id)}`
      : `/provenance?operation=${encodeURIComponent(r?.operation ?? "")}`;
    return (
      <span className="flex flex-wrap items-center gap-x-2">
        <Link className="font-mono text-xs underline underline-offset-2" href={href}>
          {reference}
        </Link>
        {r ? (
          <span className="text-muted-foreground [overflow-wrap:anywhere]">
            {r.operation} · {ago(r.timestamp)}
          </span>
        ) : null}
      </span>
    );
  }
  const usage = parseDelegationUsage(reference);
  if (usage && typeof usage === "object") {
    return (
      <span className="[overflow-wrap:anywhere]">
        {usage.simulate ? "Calls replayed against " : "Usage of "}
        {usage.simulate ? <span className="font-mono text-xs">{usage.simulate.join(", ")}</span> : null}
        {usage.simulate ? " for " : null}
        <Link
          className="font-mono text-xs underline underline-offset-2"
          href={`/keys/${encodeURIComponent(usage.delegation_id)}`}
        >
          {usage.delegation_id}
        </Link>
        , {usage.from.toISOString().slice(0, 10)} to {usage.to.toISOString().slice(0, 10)}
      </span>
    );
  }
  const window = parseAffinityWindow(reference);
  if (window && typeof window === "object") {
    return (
      <span className="[overflow-wrap:anywhere]">
        Affinity of <span className="font-mono text-xs">{window.model_id}</span> for{" "}
        <span className="font-mono text-xs">{window.prompt_key}</span>, {window.from.toISOString().slice(0, 10)} to{" "}
        {window.to.toISOString().slice(0, 10)}
      </span>
    );
  }
  return <span className="font-mono text-xs [overflow-wrap:anywhere]">{reference}</span>;
}
