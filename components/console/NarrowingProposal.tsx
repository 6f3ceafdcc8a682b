"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Badge } from "@/components/ui/primitives";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";

/** States in which a proposal is still open: waiting for its decision, or approved and not yet applied. */
const OPEN = new Set(["pending", "approved"]);

/**
 * The open `delegation_narrowing` proposal for a delegation, if there is one: what it would keep
 * and where it is decided (the approval inbox) and applied (the learning page).
 */
export function NarrowingProposal({ delegationId }: { delegationId: string }) {
  const trpc = useTRPC();
  const list = useQuery(
    trpc.learning.list.queryOptions({ kind: "delegation_narrowing", target: delegationId, limit: 20 }),
  );
  if (list.error)
    return (
      <p role="alert" className="text-sm text-destructive">
        {problemOf(list.error).detail}
      </p>
    );
  if (!list.data) return null;
  const open = list.data.data.find((p) => OPEN.has(p.approval_state));
  if (!open)
    return (
      <p className="text-sm text-muted-foreground" data-testid="narrowing-proposal">
        No open narrowing proposal. The learning worker proposes one when held capabilities go unused for its window.
      </p>
    );
  const kept = Array.isArray(open.proposed.capabilities) ? (open.proposed.capabilities as string[]) : [];
  return (
    <div
      className="space-y-1 rounded-md border border-warning/40 bg-warning/10 p-3 text-sm"
      data-testid="narrowing-proposal"
    >
      <p className="flex flex-wrap items-center gap-2">
        <Badge tone="warning">{open.approval_state}</Badge>
        <span>
          A proposal to narrow it to{" "}
          <span className="font-mono text-xs [overflow-wrap:anywhere]">{kept.join(", ")}</span>, made{" "}
          {ago(open.created_at)}.
        </span>
      </p>
      <p className="flex flex-wrap gap-x-4">
        <Link className="text-primary underline underline-offset-2" href={`/learning?id=${open.id}`}>
          The proposal and its evidence
        </Link>
        {open.approval_id ? (
          <Link className="text-primary underline underline-offset-2" href={`/approvals?id=${open.approval_id}`}>
            Its request in the approval inbox
          </Link>
        ) : null}
      </p>
    </div>
  );
}
