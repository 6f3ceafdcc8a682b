import type { ReactNode } from "react";
import { Skeleton } from "@/components/ui/skeleton";

/**
 * A chart with its title and, for screen readers, the same figures as a table: the drawing is
 * hidden from them (it says nothing a table does not say better).
 */
export function ChartFigure({
  title,
  summary,
  table,
  children,
  loading,
  height = 180,
}: {
  title: string;
  summary?: ReactNode;
  table: { head: string[]; rows: Array<Array<string | number>> };
  children: ReactNode;
  loading?: boolean;
  height?: number;
}) {
  return (
    <figure className="relative min-w-0">
      <figcaption className="flex flex-wrap items-baseline justify-between gap-x-3">
        <span className="text-sm font-semibold">{title}</span>
        {summary ? <span className="text-xs text-muted-foreground">{summary}</span> : null}
      </figcaption>
      {loading ? (
        <Skeleton className="mt-3 w-full" style={{ height }} data-testid="chart-skeleton" />
      ) : (
        <>
          <div aria-hidden className="mt-3 w-full" style={{ height }}>
            {children}
          </div>
          <table className="sr-only">
            <caption>{title}</caption>
            <thead>
              <tr>
                {table.head.map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((r, i) => (
                <tr key={i}>
                  {r.map((c, j) =>
                    j === 0 ? (
                      <th key={j} scope="row">
                        {c}
                      </th>
                    ) : (
                      <td key={j}>{c}</td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </figure>
  );
}

/** A chart's legend: each series' colour and name. */
export function Legend({ items }: { items: Array<{ label: string; color: string; value?: ReactNode }> }) {
  return (
    <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-muted-foreground">
      {items.map((i) => (
        <li key={i.label} className="inline-flex items-center gap-1.5">
          <span aria-hidden className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: i.color }} />
          {i.label}
          {i.value !== undefined ? <span className="font-medium tabular-nums text-foreground">{i.value}</span> : null}
        </li>
      ))}
    </ul>
  );
}
