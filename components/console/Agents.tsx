"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { Upload } from "lucide-react";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import type { AppRouter } from "@/server/appRouter";
import { AgentDetail } from "./AgentDetail";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { DeployAgentDialog } from "./DeployAgent";
import { ago, StatusBadge } from "./format";
import { problemOf, useTRPC } from "./Providers";

type Agent = inferRouterOutputs<AppRouter>["agents"]["list"]["data"]["agents"][number];

/** Deployed agents: bundles the organization runs in the sandbox, each run an execution. */
export function Agents() {
  const trpc = useTRPC();
  const canAdminister = useCanAdminister();
  const [deploying, setDeploying] = useState(false);
  // `?agent=` (an approval's "asked by") opens that agent.
  const opened = useSearchParams().get("agent");
  const [detail, setDetail] = useState<string | null>(opened);
  const list = useInfiniteQuery(
    trpc.agents.list.infiniteQueryOptions(
      { limit: 20 },
      {
        getNextPageParam: (last) => last.data.next_cursor ?? undefined,
        // A deploy is checked in the background: follow it until it settles.
        refetchInterval: (q) =>
          q.state.data?.pages.some((p) => p.data.agents.some((a) => a.status === "deploying")) ? 1_000 : false,
      },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data.agents) ?? [];
  const columns: ColumnDef<Agent, unknown>[] = [
    {
      header: "Name",
      cell: ({ row }) => (
        <button
          type="button"
          className="whitespace-nowrap text-left font-medium text-primary underline-offset-2 hover:underline focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          onClick={(e) => {
            e.stopPropagation();
            setDetail(row.original.id);
          }}
        >
          {row.original.name}
        </button>
      ),
    },
    { header: "Status", cell: ({ row }) => <StatusBadge status={row.original.status} /> },
    { header: "Version", cell: ({ row }) => <span className="font-mono text-xs">{row.original.version ?? "—"}</span> },
    {
      header: "Capabilities",
      cell: ({ row }) => (
        <span className="block min-w-48 text-xs">
          {row.original.capabilities.length ? (
            row.original.capabilities.join(", ")
          ) : (
            <span className="text-muted-foreground">none</span>
          )}
        </span>
      ),
    },
    {
      header: "Updated",
      cell: ({ row }) =>
        row.original.updated_at ? (
          <span className="whitespace-nowrap text-xs text-muted-foreground" title={row.original.updated_at}>
            {ago(row.original.updated_at)}
          </span>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader
        title="Agents"
        description="Bundles of JavaScript your organization deploys. Each runs in a sandbox, only with the capabilities its manifest lists and its invoker holds."
        actions={
          canAdminister ? (
            <Button onClick={() => setDeploying(true)}>
              <Upload className="h-4 w-4" aria-hidden /> Deploy agent
            </Button>
          ) : undefined
        }
      />
      <DataTable
        caption="Agents"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty={
          canAdminister ? "No agents yet. Deploy a bundle to run one." : "No agents yet. An administrator deploys them."
        }
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(a) => setDetail(a.id)}
      />
      {canAdminister ? (
        <DeployAgentDialog
          open={deploying}
          onOpenChange={setDeploying}
          onDeployed={(id) => {
            setDeploying(false);
            setDetail(id);
            void list.refetch();
          }}
        />
      ) : null}
      {detail ? <AgentDetail id={detail} onClose={() => setDetail(null)} /> : null}
    </>
  );
}
