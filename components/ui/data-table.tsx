"use client";

import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from "@tanstack/react-table";
import type { ReactNode } from "react";
import { Button } from "./button";

/**
 * A table (TanStack Table) with the console's states: loading, error, empty, and cursor paging
 * ("Load more" fetches the next page of the list's cursor). Below the `sm` breakpoint (a phone)
 * each row is stacked, one "header value" line per column, instead of a wide table scrolling
 * sideways inside its card, as Linear's lists do. The explicit ARIA roles keep it a table for
 * assistive technology once CSS no longer displays it as one, and the header row stays there for
 * them (visually hidden); the per-cell labels are CSS-generated (`data-label`), for the eye only.
 */
export function DataTable<T>({
  columns,
  data,
  loading,
  error,
  empty,
  hasMore,
  onMore,
  onRowClick,
  caption,
}: {
  columns: ColumnDef<T, unknown>[];
  data: T[];
  loading?: boolean;
  error?: string | null;
  empty: ReactNode;
  hasMore?: boolean;
  onMore?: () => void;
  onRowClick?: (row: T) => void;
  caption: string;
}) {
  const table = useReactTable({ data, columns, getCoreRowModel: getCoreRowModel() });
  const headerOf = new Map(table.getFlatHeaders().map((h) => [h.column.id, h]));
  return (
    <div className="overflow-hidden rounded-lg border border-border bg-card">
      {/* A wide table scrolls inside its frame, never the page (narrow screens). Focusable so a keyboard can scroll it too. */}
      {/* Positioned, so what is absolutely placed inside (a visually hidden label) scrolls with it instead of widening the page. */}
      <div className="relative overflow-x-auto" tabIndex={0} role="region" aria-label={caption}>
        <table role="table" className="w-full text-sm max-sm:block">
          <caption className="sr-only">{caption}</caption>
          <thead
            role="rowgroup"
            className="bg-muted text-left text-xs uppercase tracking-wide text-muted-foreground max-sm:sr-only"
          >
            {table.getHeaderGroups().map((g) => (
              <tr key={g.id} role="row">
                {g.headers.map((h) => (
                  <th key={h.id} role="columnheader" scope="col" className="px-3 py-2 align-bottom font-medium">
                    {flexRender(h.column.columnDef.header, h.getContext())}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody role="rowgroup" className="max-sm:block">
            {table.getRowModel().rows.map((row, i) => (
              <tr
                key={row.id}
                role="row"
                className={[
                  onRowClick
                    ? "cursor-pointer border-t border-border hover:bg-muted/60 focus-within:bg-muted/60"
                    : "border-t border-border",
                  "max-sm:block max-sm:py-2",
                  i === 0 ? "max-sm:border-t-0" : "",
                ].join(" ")}
                onClick={onRowClick ? () => onRowClick(row.original) : undefined}
              >
                {row.getVisibleCells().map((cell) => {
                  const header = headerOf.get(cell.column.id);
                  const label =
                    header && !header.isPlaceholder && typeof cell.column.columnDef.header === "string"
                      ? cell.column.columnDef.header
                      : undefined;
                  return (
                    <td
                      key={cell.id}
                      role="cell"
                      // The phone's per-cell label is CSS-generated content: not part of the cell's
                      // text (what a copy, a search or a test reads), and absent at desktop width.
                      data-label={label}
                      className="px-3 py-2 align-top max-sm:flex max-sm:min-w-0 max-sm:items-baseline max-sm:gap-3 max-sm:py-1 max-sm:[overflow-wrap:anywhere] max-sm:data-[label]:before:w-28 max-sm:data-[label]:before:shrink-0 max-sm:data-[label]:before:text-xs max-sm:data-[label]:before:uppercase max-sm:data-[label]:before:tracking-wide max-sm:data-[label]:before:text-muted-foreground max-sm:data-[label]:before:content-[attr(data-label)]"
                    >
                      <span className="min-w-0 max-sm:flex-1">
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </span>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {error ? (
        <p role="alert" className="border-t border-border px-4 py-6 text-sm text-destructive">
          {error}
        </p>
      ) : loading && data.length === 0 ? (
        <p className="border-t border-border px-4 py-6 text-sm text-muted-foreground">Loading…</p>
      ) : data.length === 0 ? (
        <div className="border-t border-border px-4 py-8 text-center text-sm text-muted-foreground">{empty}</div>
      ) : null}
      {hasMore ? (
        <div className="border-t border-border p-2 text-center">
          <Button variant="ghost" size="sm" onClick={onMore} disabled={loading}>
            Load more
          </Button>
        </div>
      ) : null}
    </div>
  );
}
