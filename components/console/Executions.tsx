"use client";

import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useSearchParamsWriter } from "./useSearchParamsWriter";
import { DataTable } from "@/components/ui/data-table";
import { Label, NativeSelect } from "@/components/ui/primitives";
import { ExecutionStatus } from "@/server/executions/schemas";
import { CallbackSecretPanel } from "./CallbackSecret";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { type Execution, ExecutionProgress, ExecutionStatusBadge } from "./executionFormat";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";
import { LiveIndicator, useLiveView } from "./useLiveView";

/** Agents' names for the filter and the table (the first hundred: an organization's agents are few). */
export function useAgentNames() {
  const trpc = useTRPC();
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const list = agents.data?.data.agents ?? [];
  return { list, nameOf: (id: string | undefined) => list.find((a) => a.id === id)?.name };
}

/** Execution ids share their first characters (the time): the start says what it is, the end tells two apart. */
function shortId(id: string): string {
  return id.length > 20 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id;
}

/** Every run of every agent, newest first; the bars move on their own while anything runs. */
export function Executions() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const canAdminister = useCanAdminister();
  const { list: agents, nameOf } = useAgentNames();
  // The filters live in the URL, so a filtered view can be shared or reloaded.
  const statusParam = params.get("status") ?? "";
  const status = ExecutionStatus.safeParse(statusParam).success ? (statusParam as Execution["status"]) : undefined;
  const agent = params.get("agent") ?? "";
  const setFilter = (key: "status" | "agent", value: string) =>
    writeParams((next) => (value ? next.set(key, value) : next.delete(key)));
  const queryClient = useQueryClient();
  const input = { limit: 20, ...(status ? { status } : {}), ...(agent ? { agent_id: agent } : {}) };
  const list = useInfiniteQuery(
    trpc.executions.list.infiniteQueryOptions(input, {
      getNextPageParam: (last) => last.pagination.next_cursor ?? undefined,
    }),
  );
  // New runs and moving bars arrive on the page's one stream, as the first page's new state.
  const stream = useLiveView(
    trpc.executions.listLive.subscriptionOptions(input, {
      onData: (first) =>
        queryClient.setQueryData(trpc.executions.list.infiniteQueryKey(input), (old) =>
          old ? { ...old, pages: [first, ...old.pages.slice(1)] } : old,
        ),
    }),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<Execution, unknown>[] = [
    {
      header: "Execution",
      cell: ({ row }) => (
        <Link
          href={`/executions/${row.original.id}`}
          title={row.original.id}
          aria-label={row.original.id}
          onClick={(e) => e.stopPropagation()}
          className="whitespace-nowrap font-mono text-xs text-primary underline-offset-2 hover:underline"
        >
          {shortId(row.original.id)}
        </Link>
      ),
    },
    { header: "Status", cell: ({ row }) => <ExecutionStatusBadge status={row.original.status} /> },
    { header: "Progress", cell: ({ row }) => <ExecutionProgress execution={row.original} className="w-40" /> },
    {
      header: "Agent",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-sm">
          {nameOf(row.original.agent_id) ?? <span className="font-mono text-xs">{row.original.agent_id}</span>}
        </span>
      ),
    },
    {
      header: "Attempts",
      cell: ({ row }) => (
        <span className="tabular-nums text-xs">
          {row.original.current_attempt ?? 0}/{row.original.max_attempts ?? "—"}
        </span>
      ),
    },
    {
      header: "Queued",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs text-muted-foreground" title={row.original.queued_at}>
          {ago(row.original.queued_at)}
        </span>
      ),
    },
    {
      header: "Ended",
      cell: ({ row }) => (
        <span
          className="whitespace-nowrap text-xs text-muted-foreground"
          title={row.original.completed_at ?? undefined}
        >
          {row.original.completed_at ? ago(row.original.completed_at) : "—"}
        </span>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Executions"
        description="Every run of an agent: queued, retried with backoff, cancellable, each ending in a provenance record."
        actions={<LiveIndicator status={stream.status} />}
      />
      <div className="mb-3 grid grid-cols-1 gap-3 sm:grid-cols-[12rem_16rem]">
        <div className="space-y-1">
          <Label htmlFor="f-status">Status</Label>
          <NativeSelect id="f-status" value={status ?? ""} onChange={(e) => setFilter("status", e.target.value)}>
            <option value="">Any</option>
            {ExecutionStatus.options.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-agent">Agent</Label>
          <NativeSelect id="f-agent" value={agent} onChange={(e) => setFilter("agent", e.target.value)}>
            <option value="">Any</option>
            {agent && !agents.some((a) => a.id === agent) ? <option value={agent}>{agent}</option> : null}
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      <DataTable
        caption="Executions"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No executions match these filters. Invoke an agent from the Agents page."
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(e) => router.push(`/executions/${e.id}`)}
      />
      {canAdminister ? <CallbackSecretPanel /> : null}
    </>
  );
}
