"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { CheckCircle2, ExternalLink, ShieldCheck, X, XCircle } from "lucide-react";
import Link from "next/link";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { Card, Mono } from "@/components/ui/primitives";
import { verifyInBrowser, type BrowserVerification } from "@/components/provenance/verifyInBrowser";
import { JsonBlock, when } from "../executionFormat";
import { Did } from "../format";
import { problemOf, useTRPC } from "../Providers";
import { duration, NodeStatusBadge, type WorkflowDag, type WorkflowNodeValue } from "./workflowFormat";

/**
 * A node's panel: what it was given and gave back, how long it took, and the authority behind it:
 * the workflow's delegation (derived from the starter's), the approval and its approver for an
 * approval node, and its provenance record, whose inclusion in the ledger is verified here in the
 * browser (the same check as the provenance explorer's).
 */
export function NodePanel({
  node,
  workflow,
  onClose,
}: {
  node: WorkflowNodeValue;
  workflow: WorkflowDag;
  onClose(): void;
}) {
  const decision = node.output as { status?: string; responded_by?: string; comment?: string } | null;
  return (
    <Card className="min-w-0 space-y-4 p-4" aria-label={`Node ${node.node_name}`} data-testid="node-panel">
      <div className="flex items-start justify-between gap-2">
        <div className="min-w-0">
          <h2 className="truncate text-base font-semibold">{node.node_name}</h2>
          <div className="text-xs text-muted-foreground">
            <span className="font-mono">{node.node_type}</span>
            {node.operation ? <span className="font-mono"> · {node.operation}</span> : null}
            {node.agent_name ? <span> · {node.agent_name}</span> : null}
          </div>
        </div>
        <Button variant="ghost" size="sm" aria-label="Close the node panel" onClick={onClose}>
          <X className="h-4 w-4" aria-hidden />
        </Button>
      </div>
      <dl className="grid grid-cols-[7rem_1fr] gap-x-2 gap-y-1 text-xs">
        <dt className="text-muted-foreground">Status</dt>
        <dd>
          <NodeStatusBadge status={node.status} />
        </dd>
        <dt className="text-muted-foreground">Started</dt>
        <dd>{when(node.started_at)}</dd>
        <dt className="text-muted-foreground">Ended</dt>
        <dd>{when(node.completed_at)}</dd>
        <dt className="text-muted-foreground">Duration</dt>
        <dd className="tabular-nums">{duration(node.duration_ms)}</dd>
      </dl>
      <section aria-label="Authority" className="space-y-1 text-xs">
        <h3 className="text-sm font-medium">Authority</h3>
        <dl className="grid grid-cols-[7rem_1fr] gap-x-2 gap-y-1">
          <dt className="text-muted-foreground">Delegation</dt>
          <dd className="min-w-0 break-all">
            <Mono>{workflow.delegation_id}</Mono>
            <div className="text-muted-foreground">the workflow&apos;s own, derived from the starter&apos;s</div>
          </dd>
          <dt className="text-muted-foreground">Allowed by</dt>
          <dd className="min-w-0 truncate">{workflow.started_by ? <Did value={workflow.started_by} /> : "—"}</dd>
          {node.approval_id ? (
            <>
              <dt className="text-muted-foreground">Approval</dt>
              <dd className="min-w-0 break-all">
                <Link
                  className="font-mono text-primary underline-offset-2 hover:underline"
                  href={`/approvals?id=${node.approval_id}`}
                >
                  {node.approval_id}
                </Link>
                {decision?.status ? <div>decision: {decision.status}</div> : null}
                {decision?.responded_by ? (
                  <div className="truncate">
                    approver: <Did value={decision.responded_by} />
                  </div>
                ) : null}
              </dd>
            </>
          ) : null}
          {node.execution_id ? (
            <>
              <dt className="text-muted-foreground">Execution</dt>
              <dd>
                <Link
                  className="inline-flex items-center gap-1 font-mono text-primary underline-offset-2 hover:underline"
                  href={`/executions/${node.execution_id}`}
                >
                  {node.execution_id.slice(0, 12)}… <ExternalLink className="h-3 w-3" aria-hidden />
                </Link>
              </dd>
            </>
          ) : null}
        </dl>
        {node.provenance_id ? (
          <RecordCheck
            id={node.provenance_id}
            label={
              node.approval_id
                ? node.status === "completed" || node.status === "failed"
                  ? "Decision record"
                  : "Request record"
                : "Provenance record"
            }
          />
        ) : null}
      </section>
      {node.input ? <Labelled title="Input" value={node.input} /> : null}
      {node.output ? <Labelled title="Output" value={node.output} /> : null}
      {node.error ? <Labelled title="Error" value={node.error} /> : null}
    </Card>
  );
}

/** A JSON value under its visible name, long values wrapped (the panel is narrow). */
function Labelled({ title, value }: { title: string; value: unknown }) {
  return (
    <section className="space-y-1">
      <h3 className="text-sm font-medium">{title}</h3>
      <JsonBlock label={title} value={value} wrap />
    </section>
  );
}

/**
 * The node's provenance record and an "inclusion verified" check against the ledger's signed
 * checkpoint. An approval node's record is its request's while it waits, then its decision's
 * (who decided, what, and the hash of what was approved).
 */
function RecordCheck({ id, label }: { id: string; label: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const record = useQuery(trpc.provenance.get.queryOptions({ id }));
  const [result, setResult] = useState<BrowserVerification | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    if (!record.data) return;
    setBusy(true);
    setError(null);
    try {
      const proof = await queryClient.fetchQuery(trpc.provenance.proof.queryOptions({ id }, { staleTime: 0 }));
      setResult(await verifyInBrowser(record.data as unknown as Record<string, unknown>, proof));
    } catch (e) {
      setError(problemOf(e).detail);
    } finally {
      setBusy(false);
    }
  };
  const verified = result && result.leafMatches && result.pathLeadsToRoot && result.signatureValid;
  return (
    <div className="mt-2 space-y-2 rounded-md border border-border p-2" aria-label={label} role="group">
      <div className="flex items-center justify-between gap-2">
        <span className="text-muted-foreground">{label}</span>
        <Mono className="truncate">{record.data ? `#${record.data.seq}` : id.slice(0, 12)}</Mono>
      </div>
      {record.data ? (
        <div className="break-all font-mono text-[11px]">
          {record.data.operation} · {record.data.decision} · {record.data.status}
        </div>
      ) : null}
      <Button size="sm" variant="outline" onClick={() => void verify()} disabled={busy || !record.data}>
        <ShieldCheck className="h-4 w-4" aria-hidden /> {busy ? "Verifying…" : "Verify inclusion"}
      </Button>
      {result ? (
        <p className="flex items-center gap-1" data-testid="inclusion-result">
          {verified ? (
            <CheckCircle2 className="h-4 w-4 text-success" aria-hidden />
          ) : (
            <XCircle className="h-4 w-4 text-destructive" aria-hidden />
          )}
          {verified
            ? `Inclusion verified in a tree of ${result.treeSize} records (signed checkpoint)`
            : "Verification failed"}
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="text-destructive">
          {error}
        </p>
      ) : null}
    </div>
  );
}
