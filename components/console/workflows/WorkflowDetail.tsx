"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { BackLink } from "@/components/ui/back-link";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { Card } from "@/components/ui/primitives";
import { PageHeader } from "../ConsoleShell";
import { JsonBlock, when } from "../executionFormat";
import { Did } from "../format";
import { problemOf, useTRPC } from "../Providers";
import { LiveIndicator, useLiveView } from "../useLiveView";
import { NodePanel } from "./NodePanel";
import { WorkflowGraph } from "./WorkflowGraph";
import { duration, StatsLine, WorkflowStatusBadge } from "./workflowFormat";

/** One workflow: its DAG, live while it runs, and the selected node's panel. */
export function WorkflowDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<string | null>(null);
  const workflow = useQuery(trpc.workflows.get.queryOptions({ id }));
  const dag = workflow.data;
  const stream = useLiveView(
    trpc.workflows.live.subscriptionOptions(
      { id },
      { onData: (v) => queryClient.setQueryData(trpc.workflows.get.queryKey({ id }), v) },
    ),
  );
  const cancel = useMutation(
    trpc.workflows.cancel.mutationOptions({
      onSuccess: (out) => {
        queryClient.setQueryData(trpc.workflows.get.queryKey({ id }), out);
        void queryClient.invalidateQueries({ queryKey: trpc.workflows.list.pathKey() });
        toast.success("Workflow cancelled");
      },
      onError: (err) => toast.error(problemOf(err).detail),
    }),
  );
  const node = dag?.nodes.find((n) => n.id === selected) ?? null;
  return (
    <>
      <BackLink href="/workflows">Workflows</BackLink>
      <PageHeader
        title={dag?.name ?? "Workflow"}
        description={id}
        actions={
          <div className="flex items-center gap-3">
            <LiveIndicator status={stream.status} />
            {dag?.status === "running" ? (
              <Confirm
                trigger={<Button variant="destructive">Cancel workflow</Button>}
                title="Cancel this workflow?"
                description="Nodes that have not run are skipped, runs still going are cancelled. This cannot be undone."
                confirmLabel="Cancel workflow"
                onConfirm={() => cancel.mutate({ id })}
              />
            ) : null}
          </div>
        }
      />
      {workflow.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(workflow.error).detail}
        </p>
      ) : null}
      {dag ? (
        <>
          <Card className="mb-4 grid grid-cols-2 gap-3 p-4 text-sm sm:grid-cols-4">
            <div>
              <div className="text-xs text-muted-foreground">Status</div>
              <div data-testid="workflow-status">
                <WorkflowStatusBadge status={dag.status} />
              </div>
            </div>
            <div>
              <div className="text-xs text-muted-foreground">Nodes</div>
              <StatsLine stats={dag.stats} />
            </div>
            <div>
              <div className="text-xs text-muted-foreground">Duration</div>
              <span className="tabular-nums">{duration(dag.stats.total_duration_ms)}</span>
              <span className="ml-1 text-xs text-muted-foreground">
                (avg node {duration(dag.stats.avg_node_duration_ms ? Math.round(dag.stats.avg_node_duration_ms) : null)}
                )
              </span>
            </div>
            <div className="min-w-0">
              <div className="text-xs text-muted-foreground">Started by</div>
              <div className="truncate text-xs">{dag.started_by ? <Did value={dag.started_by} /> : "—"}</div>
              <div className="text-xs text-muted-foreground">{when(dag.created_at)}</div>
            </div>
          </Card>
          {dag.error ? (
            <div className="mb-4">
              <JsonBlock label="Why the workflow ended" value={dag.error} />
            </div>
          ) : null}
          <div className="grid grid-cols-1 gap-4 xl:grid-cols-[1fr_24rem]">
            <WorkflowGraph dag={dag} selectedId={selected} onSelect={setSelected} />
            {node ? (
              <NodePanel node={node} workflow={dag} onClose={() => setSelected(null)} />
            ) : (
              <Card className="p-4 text-sm text-muted-foreground">
                Select a node to see its input, output, timing and the authority it ran under.
              </Card>
            )}
          </div>
        </>
      ) : null}
    </>
  );
}
