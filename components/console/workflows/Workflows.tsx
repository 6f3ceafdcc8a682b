"use client";

import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import { Play } from "lucide-react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { Label, NativeSelect } from "@/components/ui/primitives";
import { StartWorkflowBody, WorkflowStatus } from "@/server/workflows/schemas";
import { PageHeader } from "../ConsoleShell";
import { ago } from "../format";
import { problemOf, useTRPC } from "../Providers";
import { LiveIndicator, useLiveView } from "../useLiveView";
import { useSearchParamsWriter } from "../useSearchParamsWriter";
import { duration, StatsLine, WorkflowStatusBadge, type WorkflowSummaryValue } from "./workflowFormat";

/** Every workflow, newest first, with its stats; they move on their own while nodes run. */
export function Workflows() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const queryClient = useQueryClient();
  const [starting, setStarting] = useState(false);
  const statusParam = params.get("status") ?? "";
  const status = WorkflowStatus.safeParse(statusParam).success
    ? (statusParam as WorkflowSummaryValue["status"])
    : undefined;
  const setStatus = (value: string) =>
    writeParams((next) => (value ? next.set("status", value) : next.delete("status")));
  const input = { limit: 20, ...(status ? { status } : {}) };
  const list = useInfiniteQuery(
    trpc.workflows.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.pagination.next_cursor ?? undefined,
    }),
  );
  const stream = useLiveView(
    trpc.workflows.listLive.subscriptionOptions(input, {
      onData: (first) =>
        queryClient.setQueryData(trpc.workflows.list.infiniteQueryKey(input), (old) =>
          old ? { ...old, pages: [first, ...old.pages.slice(1)] } : old,
        ),
    }),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<WorkflowSummaryValue, unknown>[] = [
    {
      header: "Workflow",
      cell: ({ row }) => (
        <Link
          href={`/workflows/${row.original.workflow_id}`}
          onClick={(e) => e.stopPropagation()}
          className="block max-w-56 truncate text-sm text-primary underline-offset-2 hover:underline"
          title={row.original.workflow_id}
        >
          {row.original.name ?? row.original.workflow_id}
        </Link>
      ),
    },
    { header: "Status", cell: ({ row }) => <WorkflowStatusBadge status={row.original.status} /> },
    { header: "Nodes", cell: ({ row }) => <StatsLine stats={row.original.stats} /> },
    {
      header: "Duration",
      cell: ({ row }) => <span className="text-xs tabular-nums">{duration(row.original.stats.total_duration_ms)}</span>,
    },
    {
      header: "Started",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs text-muted-foreground" title={row.original.created_at}>
          {row.original.created_at ? ago(row.original.created_at) : "—"}
        </span>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Workflows"
        description="DAGs of agent runs, platform calls, approvals, forks, joins and conditions; every node a durable job with its own provenance record."
        actions={
          <div className="flex items-center gap-3">
            <LiveIndicator status={stream.status} />
            <Button onClick={() => setStarting(true)}>
              <Play className="h-4 w-4" aria-hidden /> Start workflow
            </Button>
          </div>
        }
      />
      <div className="mb-3 grid grid-cols-1 gap-3 sm:grid-cols-[12rem]">
        <div className="space-y-1">
          <Label htmlFor="f-status">Status</Label>
          <NativeSelect id="f-status" value={status ?? ""} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any</option>
            {WorkflowStatus.options.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      <DataTable
        caption="Workflows"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No workflows match. Start one from a JSON definition."
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(w) => router.push(`/workflows/${w.workflow_id}`)}
      />
      {starting ? <StartWorkflow onClose={() => setStarting(false)} /> : null}
    </>
  );
}

const EXAMPLE = JSON.stringify(
  {
    name: "refund review",
    input: { amount: 1250 },
    nodes: [
      { id: "start", node_type: "fork" },
      { id: "big", node_type: "condition", condition: { ">": [{ var: "input.amount" }, 1000] } },
      { id: "review", node_type: "svc", operation: "emitEvent", input: { type: "refund.review" } },
      { id: "autopay", node_type: "svc", operation: "emitEvent", input: { type: "refund.autopay" } },
      { id: "notify", node_type: "svc", operation: "emitEvent", input: { type: "refund.notify" } },
      { id: "done", node_type: "join" },
    ],
    edges: [
      { from_node_id: "start", to_node_id: "big", edge_type: "fork" },
      { from_node_id: "start", to_node_id: "notify", edge_type: "fork" },
      { from_node_id: "big", to_node_id: "review", edge_type: "condition_true" },
      { from_node_id: "big", to_node_id: "autopay", edge_type: "condition_false" },
      { from_node_id: "review", to_node_id: "done", edge_type: "join" },
      { from_node_id: "autopay", to_node_id: "done", edge_type: "join" },
      { from_node_id: "notify", to_node_id: "done", edge_type: "join" },
    ],
  },
  null,
  2,
);

/**
 * The start form: a definition as JSON, checked against the same schema the API uses before it is
 * sent; the server's graph checks (cycles, dangling edges, joins, conditions) come back as a list
 * naming each node or edge.
 */
function StartWorkflow({ onClose }: { onClose(): void }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [text, setText] = useState(EXAMPLE);
  const [problems, setProblems] = useState<string[]>([]);
  const start = useMutation(
    trpc.workflows.start.mutationOptions({
      onSuccess: (dag) => {
        void queryClient.invalidateQueries({ queryKey: trpc.workflows.list.pathKey() });
        toast.success("Workflow started");
        router.push(`/workflows/${dag.workflow_id}`);
      },
      onError: (err) => {
        const { detail, fields } = problemOf(err);
        const listed = Object.entries(fields).map(([field, message]) => `${field}: ${message}`);
        setProblems(listed.length ? listed : [detail]);
      },
    }),
  );
  const submit = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      setProblems([`Not JSON: ${e instanceof Error ? e.message : String(e)}`]);
      return;
    }
    const checked = StartWorkflowBody.safeParse(parsed);
    if (!checked.success) {
      setProblems(checked.error.issues.map((i) => `${i.path.join(".") || "definition"}: ${i.message}`));
      return;
    }
    setProblems([]);
    start.mutate(checked.data);
  };
  return (
    <Dialog
      open
      onOpenChange={(o) => !o && onClose()}
      title="Start a workflow"
      description="A definition: nodes (agent, svc, approval, fork, join, condition) and the edges between them."
    >
      <Label htmlFor="wf-definition">Definition (JSON)</Label>
      <textarea
        id="wf-definition"
        value={text}
        onChange={(e) => setText(e.target.value)}
        spellCheck={false}
        rows={16}
        className="mt-1 w-full rounded-md border border-border bg-background p-2 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
      />
      {problems.length ? (
        <ul role="alert" aria-label="Problems" className="mt-2 space-y-1 text-xs text-destructive">
          {problems.map((p) => (
            <li key={p} className="[overflow-wrap:anywhere]">
              {p}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="mt-4 flex justify-end gap-2">
        <Button variant="ghost" onClick={onClose}>
          Cancel
        </Button>
        <Button onClick={submit} disabled={start.isPending}>
          {start.isPending ? "Starting…" : "Start"}
        </Button>
      </div>
    </Dialog>
  );
}
