"use client";

import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useEffect, type ReactNode } from "react";
import { Badge, Card } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { Did } from "./Did";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";
import { usePassportNames } from "./usePassportNames";

type Approval = inferRouterOutputs<AppRouter>["approvals"]["get"];

/**
 * What asks, by name: an agent (`agt_…`, its page) or a workflow (`wf_…`, its DAG), from the
 * organization's first hundred of each; an id without a name stays an id.
 */
export function useSubjects() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }, { staleTime: 60_000 }));
  const workflows = useQuery(trpc.workflows.list.queryOptions({ limit: 100 }, { staleTime: 60_000 }));
  return (id: string): { name: string; href: string | null; kind: "agent" | "workflow" | null } => {
    if (id.startsWith("wf_"))
      return {
        name: workflows.data?.data.find((w) => w.workflow_id === id)?.name ?? id,
        href: `/workflows/${id}`,
        kind: "workflow",
      };
    const agent = agents.data?.data.agents.find((a) => a.id === id);
    if (agent) return { name: agent.name, href: `/agents?agent=${id}`, kind: "agent" };
    return { name: id, href: id.startsWith("agt_") ? `/agents?agent=${id}` : null, kind: null };
  };
}

/** The agent or workflow that asks, named and linked. */
export function SubjectLink({ id, subjects }: { id: string; subjects: ReturnType<typeof useSubjects> }) {
  const s = subjects(id);
  const text = (
    <>
      {s.kind ? <span className="text-muted-foreground">{s.kind} </span> : null}
      <span className={s.name === id ? "font-mono text-xs" : "font-medium"}>{s.name}</span>
    </>
  );
  return s.href ? (
    <Link href={s.href} className="text-primary underline-offset-2 hover:underline">
      {text}
    </Link>
  ) : (
    text
  );
}

/** The run or workflow that waits for the decision: an execution's page, or the workflow's DAG. */
export function TaskLink({ approval }: { approval: Approval }) {
  const href = approval.task_id.startsWith("exe_")
    ? `/executions/${approval.task_id}`
    : approval.agent_id.startsWith("wf_")
      ? `/workflows/${approval.agent_id}`
      : null;
  const label = approval.task_id.startsWith("exe_")
    ? "execution"
    : approval.agent_id.startsWith("wf_")
      ? "workflow node"
      : null;
  if (!href) return <span className="font-mono text-xs">{approval.task_id}</span>;
  return (
    <Link href={href} className="text-primary underline-offset-2 hover:underline">
      <span className="text-muted-foreground">{label} </span>
      <span className="font-mono text-xs">{approval.task_id}</span>
    </Link>
  );
}

/** A passport by name with its DID, linked to the passport. */
export function PassportLink({ did, name }: { did: string | null | undefined; name: string | undefined }) {
  if (!did) return <span className="text-muted-foreground">—</span>;
  return (
    <span className="inline-flex min-w-0 max-w-full items-center gap-1">
      <Did value={did} name={name} truncate />
      <Link
        href={`/passports?did=${encodeURIComponent(did)}`}
        className="shrink-0 text-xs text-primary underline-offset-2 hover:underline"
        aria-label={`Passport of ${name ?? did}`}
      >
        passport
      </Link>
    </span>
  );
}

const STATUS_TONE = {
  pending: "primary",
  delegated: "primary",
  approved: "success",
  approved_with_modifications: "success",
  overridden: "warning",
  rejected: "danger",
  expired: "neutral",
  cancelled: "neutral",
} as const;

export function ApprovalStatusBadge({ status }: { status: Approval["status"] }) {
  return <Badge tone={STATUS_TONE[status]}>{status.replaceAll("_", " ")}</Badge>;
}

const END_REASONS: Record<string, string> = {
  requester: "cancelled by the requester",
  delegation_revoked: "the requester's delegation was revoked",
  execution_ended: "the run that asked ended",
  workflow_cancelled: "the workflow was cancelled",
  expired: "nobody decided before it expired",
  escalation_exhausted: "every escalation level passed undecided",
};

/** Who settled a request and why: the approver and their comment, or why it ended undecided. */
function Settled({
  approval,
  nameOf,
}: {
  approval: Approval;
  nameOf: (did: string | null | undefined) => string | undefined;
}) {
  if (approval.responded_by)
    return (
      <span className="min-w-0">
        by <PassportLink did={approval.responded_by} name={nameOf(approval.responded_by)} />
        {approval.response_comment ? <span className="block break-words">“{approval.response_comment}”</span> : null}
      </span>
    );
  return <span>{approval.end_reason ? (END_REASONS[approval.end_reason] ?? approval.end_reason) : "—"}</span>;
}

/**
 * Decided, expired and cancelled requests, newest first (the last 50 requests of the
 * organization, the open ones left to the inbox above): what, who asked, who settled it and why.
 */
export function ApprovalHistory({ pending }: { pending: number | null }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.approvals.list.queryOptions({ limit: 50 }));
  // A request leaving the inbox (decided here, by someone else, expired) changes the count the
  // inbox's stream sends: the history reads again then.
  const { refetch } = list;
  useEffect(() => {
    if (pending !== null) void refetch();
  }, [pending, refetch]);
  const subjects = useSubjects();
  const nameOf = usePassportNames();
  const rows = (list.data?.data ?? []).filter((a) => a.status !== "pending" && a.status !== "delegated");
  return (
    <section aria-labelledby="approval-history-title" className="mt-8">
      <h2 id="approval-history-title" className="mb-3 text-base font-semibold">
        History
      </h2>
      {list.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(list.error).detail}
        </p>
      ) : rows.length === 0 && !list.isLoading ? (
        <Card className="p-4 text-sm text-muted-foreground">No request has been decided or expired yet.</Card>
      ) : (
        <Card className="min-w-0 p-0">
          <ul
            aria-label="Decided and expired requests"
            className="divide-y divide-border"
            data-testid="approval-history"
          >
            {rows.map((a) => (
              <li key={a.id} className="min-w-0 space-y-1 p-3 text-sm">
                <div className="flex flex-wrap items-center gap-2">
                  <ApprovalStatusBadge status={a.status} />
                  <Link
                    href={`/approvals?id=${a.id}`}
                    className="min-w-0 font-medium underline-offset-2 [overflow-wrap:anywhere] hover:underline"
                  >
                    {a.action_description ?? a.id}
                  </Link>
                  <span className="text-xs text-muted-foreground">
                    {a.responded_at ? ago(a.responded_at) : ago(a.created_at)}
                  </span>
                </div>
                <div className="flex min-w-0 flex-wrap items-center gap-x-2 text-xs text-muted-foreground">
                  <span>
                    asked by <SubjectLink id={a.agent_id} subjects={subjects} />
                  </span>
                  <span aria-hidden>·</span>
                  <Settled approval={a} nameOf={nameOf} />
                </div>
              </li>
            ))}
          </ul>
        </Card>
      )}
    </section>
  );
}

/** A request opened by its id (`?id=`) that is no longer waiting: how it was settled. */
export function SettledApproval({ id }: { id: string }) {
  const trpc = useTRPC();
  const approval = useQuery(trpc.approvals.get.queryOptions({ id }));
  const subjects = useSubjects();
  const nameOf = usePassportNames();
  const a = approval.data;
  if (approval.error)
    return (
      <p role="alert" className="mb-4 text-sm text-destructive">
        {problemOf(approval.error).detail}
      </p>
    );
  if (!a || a.status === "pending" || a.status === "delegated") return null;
  return (
    <Card className="mb-4 min-w-0 space-y-2 p-4" aria-label="Settled request" data-testid="settled-approval">
      <ApprovalFacts
        approval={a}
        subjects={subjects}
        badge={<ApprovalStatusBadge status={a.status} />}
        taskLabel="Task"
      >
        <dt className="text-muted-foreground">Settled</dt>
        <dd className="min-w-0">
          {a.responded_at ? `${ago(a.responded_at)} ` : ""}
          <Settled approval={a} nameOf={nameOf} />
        </dd>
      </ApprovalFacts>
    </Card>
  );
}

/**
 * What a request is and who asked for it: the heading and the first rows of every view of one
 * request (a waiting one being decided, a settled one opened by its id); `children` are the rows
 * that differ (when it expires, how it was settled).
 */
export function ApprovalFacts({
  approval,
  subjects,
  badge,
  taskLabel,
  large = false,
  children,
}: {
  approval: Approval;
  subjects: ReturnType<typeof useSubjects>;
  badge: ReactNode;
  taskLabel: string;
  large?: boolean;
  children: ReactNode;
}) {
  const nameOf = usePassportNames();
  return (
    <>
      <div className="flex flex-wrap items-center gap-2">
        {badge}
        <h2 className={`${large ? "text-lg" : "text-base"} min-w-0 font-semibold [overflow-wrap:anywhere]`}>
          {approval.action_description}
        </h2>
      </div>
      <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
        <dt className="text-muted-foreground">Asked by</dt>
        <dd className="min-w-0 truncate">
          <SubjectLink id={approval.agent_id} subjects={subjects} />
        </dd>
        <dt className="text-muted-foreground">Requester</dt>
        <dd className="min-w-0">
          <PassportLink did={approval.requester_passport_id} name={nameOf(approval.requester_passport_id)} />
        </dd>
        <dt className="text-muted-foreground">{taskLabel}</dt>
        <dd className="min-w-0 truncate">
          <TaskLink approval={approval} />
        </dd>
        {children}
      </dl>
    </>
  );
}
