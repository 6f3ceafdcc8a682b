"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { DataTable } from "@/components/ui/data-table";
import { Label, NativeSelect } from "@/components/ui/primitives";
import { InstallationStatus } from "@/server/marketplace/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "../ConsoleShell";
import { ago, StatusBadge } from "../format";
import { problemOf, useTRPC } from "../Providers";
import { useSearchParamsWriter } from "../useSearchParamsWriter";
import { MarketplaceTabs } from "./MarketplaceTabs";
import { ConnectorIcon, HealthStatus } from "./marketplaceFormat";

type Installation = inferRouterOutputs<AppRouter>["marketplace"]["installations"]["data"][number];

/** The organization's installations: state, health and 30-day activity, each opening its page. */
export function Installations() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const status = InstallationStatus.safeParse(params.get("status")).data;
  const list = useInfiniteQuery(
    trpc.marketplace.installations.infiniteQueryOptions(
      { limit: 20, ...(status ? { status } : {}) },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<Installation, unknown>[] = [
    {
      header: "Connector",
      cell: ({ row }) => (
        <Link
          href={`/marketplace/installations/${row.original.installation_id}`}
          onClick={(e) => e.stopPropagation()}
          className="flex items-center gap-2 font-medium text-primary underline-offset-2 hover:underline"
        >
          <ConnectorIcon name={row.original.connector.name} src={row.original.connector.icon_url} size={28} />
          {row.original.connector.name}
        </Link>
      ),
    },
    { header: "Status", cell: ({ row }) => <StatusBadge status={row.original.status} /> },
    { header: "Health", cell: ({ row }) => <HealthStatus status={row.original.health_status} /> },
    {
      header: "Invocations (30 d)",
      cell: ({ row }) => <span className="tabular-nums">{row.original.invocation_count_30d}</span>,
    },
    {
      header: "Last invocation",
      cell: ({ row }) => (row.original.last_invocation_at ? ago(row.original.last_invocation_at) : "never"),
    },
    { header: "Installed", cell: ({ row }) => ago(row.original.installed_at) },
  ];
  return (
    <>
      <PageHeader
        title="Marketplace"
        description="Your organization's connector installations: their state, health and use."
      />
      <MarketplaceTabs current="installations" />
      <div className="mb-3 grid grid-cols-1 gap-3 sm:grid-cols-[12rem]">
        <div className="space-y-1">
          <Label htmlFor="in-status">Status</Label>
          <NativeSelect
            id="in-status"
            value={status ?? ""}
            onChange={(e) => {
              const value = e.target.value;
              writeParams((next) => (value ? next.set("status", value) : next.delete("status")));
            }}
          >
            <option value="">Any</option>
            {InstallationStatus.options.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      <DataTable
        caption="Connector installations"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty={status ? "No installation in this status." : "Nothing installed yet: pick a connector in the catalogue."}
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(i) => router.push(`/marketplace/installations/${i.installation_id}`)}
      />
    </>
  );
}
