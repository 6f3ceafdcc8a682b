"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect, useMemo, useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Badge, Card, Label } from "@/components/ui/primitives";
import { STEP_UP_RISK_LEVELS } from "@/server/approvals/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago } from "./format";
import { confirmWithPasskey } from "./passkeyClient";
import { problemOf, useTRPC } from "./Providers";
import { LiveIndicator, useLiveView } from "./useLiveView";
import { useSearchParams } from "next/navigation";
import { ApprovalFacts, ApprovalHistory, SettledApproval, useSubjects } from "./ApprovalContext";
import { jsonDiff } from "./approvalDiff";
import { JsonDiffList } from "./JsonDiffList";

type Approval = inferRouterOutputs<AppRouter>["approvals"]["get"];

const RISK_TONE = { low: "neutral", medium: "primary", high: "warning", critical: "danger" } as const;
const INPUT = { status: "pending" as const, limit: 50, mine: "true" as const };
const LIVE_INPUT = { status: "pending" as const, limit: 50, mine: true };

export function RiskBadge({ risk }: { risk: Approval["risk_level"] }) {
  return risk ? <Badge tone={RISK_TONE[risk]}>{risk}</Badge> : null;
}

/**
 * The approver's inbox: open requests they may decide, riskiest then newest first, paged (50 at a
 * time, so 10,000 pending cost one page), live over the console's event stream. The detail shows
 * the request data, edits it as JSON with a diff before approving with modifications; keys: a
 * approve, r reject, j/k next/previous, x select. Selected requests are decided together, each
 * its own decision and record.
 */
export function Approvals() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useInfiniteQuery(
    trpc.approvals.list.infiniteQueryOptions(INPUT, {
      getNextPageParam: (last) => last.pagination.next_cursor ?? undefined,
    }),
  );
  const [pending, setPending] = useState<number | null>(null);
  const stream = useLiveView(
    trpc.approvals.inbox.subscriptionOptions(LIVE_INPUT, {
      onData: (first) => {
        setPending(first.pending_count);
        queryClient.setQueryData(trpc.approvals.list.infiniteQueryKey(INPUT), (old) =>
          old ? { ...old, pages: [{ data: first.data, pagination: first.pagination }, ...old.pages.slice(1)] } : old,
        );
      },
    }),
  );
  const rows = useMemo(() => list.data?.pages.flatMap((p) => p.data) ?? [], [list.data]);
  // `?id=` (links from the overview, a workflow node, an execution, Learning) opens that request.
  const requested = useSearchParams().get("id");
  const [selectedId, setSelectedId] = useState<string | null>(requested);
  const subjects = useSubjects();
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const current = rows.find((r) => r.id === selectedId) ?? rows[0];
  const index = current ? rows.indexOf(current) : -1;

  const respond = useMutation(trpc.approvals.respond.mutationOptions());
  const decide = async (ids: string[], decision: "approve" | "reject", extra: Record<string, unknown> = {}) => {
    let ok = 0;
    const needStepUp: string[] = [];
    for (const id of ids) {
      try {
        await respond.mutateAsync({ id, decision, ...extra });
        ok++;
      } catch (e) {
        if (isStepUpRequired(e)) needStepUp.push(id);
        else toast.error(`${id}: ${problemOf(e).detail}`);
      }
    }
    if (ok > 0)
      toast.success(`${ok} request${ok === 1 ? "" : "s"} ${decision === "approve" ? "approved" : "rejected"}`);
    if (needStepUp.length > 0) {
      // A high or critical request needs a passkey assertion at most 5 minutes old made in this
      // session: the person confirms with their passkey (a click, so the browser's prompt has its
      // user gesture), which signs them in again (a new session replacing this one), then the same
      // decisions are sent again.
      toast.warning(
        `${needStepUp.length === 1 ? "This request is" : `${needStepUp.length} requests are`} high risk: confirm it is you with your passkey.`,
        {
          duration: 60_000,
          action: {
            label: "Confirm with passkey",
            onClick: () =>
              void confirmWithPasskey().then(
                () => decide(needStepUp, decision, extra),
                (e: unknown) => toast.error((e as Error).message),
              ),
          },
        },
      );
    }
    setChecked(new Set());
    await queryClient.invalidateQueries({ queryKey: trpc.approvals.list.infiniteQueryKey(INPUT) });
  };

  // Keyboard shortcuts, outside text fields: j/k move, a approve, r reject, x select.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      if (target.closest("input, textarea, select, [contenteditable]") || e.metaKey || e.ctrlKey || e.altKey) return;
      if (!current) return;
      if (e.key === "j" || e.key === "k") {
        const next = rows[Math.min(rows.length - 1, Math.max(0, index + (e.key === "j" ? 1 : -1)))];
        if (next) setSelectedId(next.id);
      } else if (e.key === "a") void decide([current.id], "approve");
      else if (e.key === "r") void decide([current.id], "reject");
      else if (e.key === "x")
        setChecked((s) => {
          const n = new Set(s);
          if (n.has(current.id)) n.delete(current.id);
          else n.add(current.id);
          return n;
        });
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  return (
    <div>
      <PageHeader
        title="Approvals"
        description="Requests waiting for your decision, riskiest and newest first."
        actions={<LiveIndicator status={stream.status} />}
      />
      {/* Keys are for keyboards: a phone has none to press. */}
      <p className="-mt-2 mb-3 hidden text-xs text-muted-foreground md:block" data-testid="approval-keys">
        Keys: j/k move, a approve, r reject, x select.
      </p>
      {requested && !rows.some((r) => r.id === requested) ? <SettledApproval id={requested} /> : null}
      <div className="mb-3 flex flex-wrap items-center gap-2 text-sm">
        <span data-testid="pending-count">
          {pending ?? rows.length} pending{list.hasNextPage ? " (first pages shown)" : ""}
        </span>
        {checked.size > 0 ? (
          <>
            <span className="text-muted-foreground">· {checked.size} selected</span>
            <Button size="sm" onClick={() => void decide([...checked], "approve")} disabled={respond.isPending}>
              Approve selected
            </Button>
            <Button
              size="sm"
              variant="outline"
              onClick={() => void decide([...checked], "reject")}
              disabled={respond.isPending}
            >
              Reject selected
            </Button>
          </>
        ) : null}
      </div>
      {rows.length === 0 && !list.isLoading ? (
        <Card className="p-6 text-sm text-muted-foreground">Nothing waits for you.</Card>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
          <Card className="min-w-0 p-0">
            <ul aria-label="Pending requests" className="divide-y divide-border">
              {rows.map((r) => (
                <li
                  key={r.id}
                  // The selected row is marked by a bar, not a fill: a fill under the risk badges' tinted
                  // backgrounds takes their text below WCAG AA contrast.
                  className={cn(
                    "flex items-start gap-2 border-l-4 p-3",
                    r.id === current?.id ? "border-l-primary" : "border-l-transparent",
                  )}
                >
                  <input
                    type="checkbox"
                    className="mt-1"
                    aria-label={`Select ${r.action_description ?? r.id}`}
                    checked={checked.has(r.id)}
                    onChange={(e) =>
                      setChecked((s) => {
                        const n = new Set(s);
                        if (e.target.checked) n.add(r.id);
                        else n.delete(r.id);
                        return n;
                      })
                    }
                  />
                  <button
                    type="button"
                    onClick={() => setSelectedId(r.id)}
                    aria-current={r.id === current?.id ? "true" : undefined}
                    className="min-w-0 flex-1 text-left focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                  >
                    <div className="flex items-center gap-2">
                      <RiskBadge risk={r.risk_level} />
                      <span className="truncate text-sm font-medium">{r.action_description}</span>
                    </div>
                    <div className="mt-1 truncate text-xs text-muted-foreground">
                      {subjects(r.agent_id).name} · asked {ago(r.created_at)} · expires{" "}
                      {r.expires_at ? ago(r.expires_at) : "—"}
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
          {current ? (
            <ApprovalDetail
              key={current.id}
              approval={current}
              onDecide={decide}
              busy={respond.isPending}
              subjects={subjects}
            />
          ) : null}
        </div>
      )}
      <ApprovalHistory pending={pending ?? (list.isLoading ? null : rows.length)} />
    </div>
  );
}

function ApprovalDetail({
  approval,
  onDecide,
  busy,
  subjects,
}: {
  approval: Approval;
  onDecide: (ids: string[], decision: "approve" | "reject", extra?: Record<string, unknown>) => Promise<void>;
  busy: boolean;
  subjects: ReturnType<typeof useSubjects>;
}) {
  const original = approval.request_data ?? {};
  const [text, setText] = useState(() => JSON.stringify(original, null, 2));
  const [comment, setComment] = useState("");
  const parsed = useMemo(() => {
    try {
      const v = JSON.parse(text) as unknown;
      if (!v || typeof v !== "object" || Array.isArray(v)) return { error: "The parameters must be a JSON object." };
      return { value: v as Record<string, unknown> };
    } catch (e) {
      return { error: `Not valid JSON: ${(e as Error).message}` };
    }
  }, [text]);
  const diff = parsed.value ? jsonDiff(original, parsed.value) : [];
  const modified = diff.length > 0;
  const respond = useMutation(useTRPC().approvals.respond.mutationOptions());
  const withComment = comment ? { comment } : {};
  return (
    <Card className="min-w-0 space-y-4 p-4" aria-label="Request detail">
      <ApprovalFacts
        approval={approval}
        subjects={subjects}
        badge={<RiskBadge risk={approval.risk_level} />}
        taskLabel="Waiting"
        large
      >
        <dt className="text-muted-foreground">Expires</dt>
        <dd>{approval.expires_at ? ago(approval.expires_at) : "—"}</dd>
      </ApprovalFacts>
      {approval.risk_factors && approval.risk_factors.length > 0 ? (
        <ul className="flex flex-wrap gap-2" aria-label="Risk factors">
          {approval.risk_factors.map((f) => (
            <li key={f.factor}>
              <Badge tone={f.severity === "high" ? "danger" : f.severity === "medium" ? "warning" : "neutral"}>
                {f.factor}
              </Badge>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="space-y-1">
        <Label htmlFor="approval-params">Parameters (JSON; edit to approve with modifications)</Label>
        <textarea
          id="approval-params"
          value={text}
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
          rows={Math.min(16, Math.max(4, text.split("\n").length))}
          className="w-full rounded-md border border-input bg-background p-2 font-mono text-xs"
        />
        {parsed.error ? (
          <p role="alert" className="text-sm text-destructive">
            {parsed.error}
          </p>
        ) : null}
      </div>
      {modified ? (
        <div aria-label="Changes" className="space-y-1">
          <h3 className="text-sm font-medium">Changes</h3>
          <JsonDiffList diff={diff} testId="approval-diff" />
        </div>
      ) : null}
      <div className="space-y-1">
        <Label htmlFor="approval-comment">Comment (optional)</Label>
        <input
          id="approval-comment"
          value={comment}
          onChange={(e) => setComment(e.target.value)}
          maxLength={2000}
          className="w-full rounded-md border border-input bg-background p-2 text-sm"
        />
      </div>
      <div className="flex flex-wrap gap-2">
        {modified ? (
          <Button
            disabled={busy || respond.isPending || !parsed.value}
            onClick={() =>
              void onDecide([approval.id], "approve", {
                decision: "approve_with_modifications",
                modified_params: parsed.value,
                ...withComment,
              })
            }
          >
            Approve with modifications
          </Button>
        ) : (
          <Button disabled={busy} onClick={() => void onDecide([approval.id], "approve", withComment)}>
            Approve <kbd className="ml-1 hidden text-xs opacity-70 md:inline">a</kbd>
          </Button>
        )}
        <Button variant="outline" disabled={busy} onClick={() => void onDecide([approval.id], "reject", withComment)}>
          Reject <kbd className="ml-1 hidden text-xs opacity-70 md:inline">r</kbd>
        </Button>
      </div>
      {approval.risk_level && (STEP_UP_RISK_LEVELS as readonly string[]).includes(approval.risk_level) ? (
        <p className="text-xs text-muted-foreground" data-testid="step-up-note">
          {approval.risk_level} risk: approving or rejecting asks you to confirm with your passkey first.
        </p>
      ) : null}
    </Card>
  );
}

/** The refusal a high or critical decision gets without a fresh passkey assertion. */
function isStepUpRequired(error: unknown): boolean {
  const problem = (error as { data?: { problem?: { code?: string } } } | null)?.data?.problem;
  return problem?.code === "approval_step_up_required";
}
