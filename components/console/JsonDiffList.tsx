import type { ReactNode } from "react";
import type { JsonChange } from "./approvalDiff";

/** The leaves that differ between two JSON values, struck through before and highlighted after. */
export function JsonDiffList({ diff, testId, empty }: { diff: JsonChange[]; testId: string; empty?: ReactNode }) {
  return (
    <ul className="space-y-0.5 rounded-md border border-border p-2 font-mono text-xs" data-testid={testId}>
      {diff.length === 0 && empty ? <li className="text-muted-foreground">{empty}</li> : null}
      {diff.map((d) => (
        <li key={d.path} className="[overflow-wrap:anywhere]">
          <span className="text-muted-foreground">{d.path}: </span>
          {d.before !== undefined ? (
            <span className="text-destructive line-through">{JSON.stringify(d.before)}</span>
          ) : null}
          {d.before !== undefined && d.after !== undefined ? " → " : null}
          {d.after !== undefined ? <span className="text-success">{JSON.stringify(d.after)}</span> : null}
        </li>
      ))}
    </ul>
  );
}
