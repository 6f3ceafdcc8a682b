"use client";

import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from "@tanstack/react-table";
import type { ReactNode } from "react";
import { Button } from "./button";

/**
 * A table (TanStack Table) with the console's states: loading, error, empty, and cursor paging
 * ("Load more" fetches the next page of the list's cursor).
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
  return (
    <div className="overflow-hidden rounded-lg border border-border bg-card">
      {/* A wide table scrolls inside its frame, never the page (narrow screens). Focusable so a keyboard can scroll it too. */}
      {/* Positioned, so what is absolutely placed inside (a visually hidden label) scrolls with it instead of widening the page. */}
      <div className="relative overflow-x-auto" tabIndex={0} role="region" aria-label={caption}>
        <table className="w-full text-sm">
          <caption className="sr-only">{caption}</caption>
          <thead className="bg-muted text-left text-xs uppercase tracking-wide text-muted-foreground">
            {table.getHeaderGroups().map((g) => (
              <tr key={g.id}>
                {g.headers.map((h) => (
                  <th key={h.id} scope="col" className="whitespace-nowrap px-3 py-2 font-medium">
                    {flexRender(h.column.columnDef.header, h.getContext())}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr
                key={row.id}
                className={
                  onRowClick
                    ? "cursor-pointer border-t border-border hover:bg-muted/60 focus-within:bg-muted/60"
                    : "border-t border-border"
                }
                onClick={onRowClick ? () => onRowClick(row.original) : undefined}
              >
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id} className="px-3 py-2 align-top">
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
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
