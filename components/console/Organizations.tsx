"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { DataTable } from "@/components/ui/data-table";
import { Badge } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/trpc/root";
import { PageHeader } from "./ConsoleShell";
import { ago, Did } from "./format";
import { problemOf, useTRPC } from "./Providers";

type Org = inferRouterOutputs<AppRouter>["controlPlane"]["orgs"]["list"]["data"][number];

/** Organizations: this one and the tenants it created (POST /v1/cp/orgs). */
export function Organizations() {
  const trpc = useTRPC();
  const list = useInfiniteQuery(trpc.controlPlane.orgs.list.infiniteQueryOptions({ limit: 20 }, { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined }));
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<Org, unknown>[] = [
    { header: "Name", cell: ({ row }) => <span className="font-medium">{row.original.name}</span> },
    { header: "Slug", cell: ({ row }) => <span className="font-mono text-xs">{row.original.slug}</span> },
    { header: "DID", cell: ({ row }) => <Did value={row.original.org_did} /> },
    { header: "Deployment", cell: ({ row }) => <Badge>{row.original.deployment_mode}</Badge> },
    { header: "Autonomy", cell: ({ row }) => row.original.autonomy_profile ?? <span className="text-muted-foreground">—</span> },
    { header: "Created", cell: ({ row }) => <span className="text-xs text-muted-foreground">{ago(row.original.created_at)}</span> },
  ];
  return (
    <>
      <PageHeader title="Organizations" description="Your organization and the tenants it created." />
      <DataTable caption="Organizations" columns={columns} data={rows} loading={list.isFetching} error={list.error ? problemOf(list.error).detail : null} empty="No organizations." hasMore={list.hasNextPage} onMore={() => void list.fetchNextPage()} />
    </>
  );
}
