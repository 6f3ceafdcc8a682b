"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Badge, FieldError, Input, Label } from "@/components/ui/primitives";
import { EventType } from "@/server/events/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

export type BusEvent = inferRouterOutputs<AppRouter>["events"]["get"];

/** Event ids share their first characters (the time): the start says what it is, the end tells two apart. */
export function shortEventId(id: string): string {
  return id.length > 20 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id;
}

export function ViaBadge({ via }: { via: BusEvent["via"] }) {
  return <Badge tone={via === "ingest" ? "primary" : "neutral"}>{via}</Badge>;
}

/** The event log: every event put on the bus, newest first, with what it matched. */
export function Events() {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  // The type filter lives in the URL, so a filtered view can be shared or reloaded.
  const typeParam = params.get("type") ?? "";
  const type = EventType.safeParse(typeParam).success ? typeParam : undefined;
  const [draft, setDraft] = useState(typeParam);
  const [draftError, setDraftError] = useState<string | undefined>(undefined);
  const applyType = (value: string) => {
    const v = value.trim();
    const parsed = EventType.safeParse(v);
    if (v && !parsed.success) {
      setDraftError(parsed.error.issues[0]?.message);
      return;
    }
    setDraftError(undefined);
    writeParams((next) => (v ? next.set("type", v) : next.delete("type")));
  };
  const list = useInfiniteQuery(
    trpc.events.list.infiniteQueryOptions(
      { limit: 20, ...(type ? { type } : {}) },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<BusEvent, unknown>[] = [
    {
      header: "Event",
      cell: ({ row }) => (
        <Link
          href={`/events/${row.original.id}`}
          title={row.original.id}
          aria-label={row.original.id}
          onClick={(e) => e.stopPropagation()}
          className="whitespace-nowrap font-mono text-xs text-primary underline-offset-2 hover:underline"
        >
          {shortEventId(row.original.id)}
        </Link>
      ),
    },
    {
      header: "Type",
      cell: ({ row }) => <span className="whitespace-nowrap font-mono text-xs">{row.original.type}</span>,
    },
    {
      header: "Source",
      cell: ({ row }) => (
        <span className="text-xs">{row.original.source ?? <span className="text-muted-foreground">—</span>}</span>
      ),
    },
    { header: "Via", cell: ({ row }) => <ViaBadge via={row.original.via} /> },
    {
      header: "Matches",
      cell: ({ row }) => (
        <span className="tabular-nums text-xs" data-testid="event-matches">
          {row.original.matches.length}
        </span>
      ),
    },
    {
      header: "Time",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs text-muted-foreground" title={row.original.occurred_at}>
          {ago(row.original.occurred_at)}
        </span>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Events"
        description="Every event put on the bus, through ingest (from outside) or emit (from your systems and agents), and the executions and deliveries it caused."
      />
      <form
        className="mb-3 flex flex-wrap items-end gap-2"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          applyType(draft);
        }}
      >
        <div className="w-full space-y-1 sm:w-72">
          <Label htmlFor="f-type">Type</Label>
          <Input
            id="f-type"
            placeholder="invoice.paid"
            value={draft}
            aria-invalid={!!draftError}
            onChange={(e) => setDraft(e.target.value)}
          />
        </div>
        <Button type="submit" variant="outline">
          Filter
        </Button>
        {type ? (
          <Button
            type="button"
            variant="ghost"
            onClick={() => {
              setDraft("");
              applyType("");
            }}
          >
            Clear
          </Button>
        ) : null}
        <div className="w-full">
          <FieldError message={draftError} />
        </div>
      </form>
      <DataTable
        caption="Events"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty={
          type
            ? `No ${type} events yet.`
            : "No events yet. Events arrive through POST /v1/events/ingest and /v1/events/emit, or a webhook's test button."
        }
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(e) => router.push(`/events/${e.id}`)}
      />
    </>
  );
}
