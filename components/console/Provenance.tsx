"use client";

import { useInfiniteQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { CheckCircle2, ShieldCheck, XCircle } from "lucide-react";
import { useState } from "react";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { Input, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import { verifyInBrowser, type BrowserVerification } from "@/components/provenance/verifyInBrowser";
import type { AppRouter } from "@/server/trpc/root";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { problemOf, useTRPC } from "./Providers";

type ProvenanceRecord = inferRouterOutputs<AppRouter>["provenance"]["list"]["data"][number];

/** The provenance explorer: every governed call of the organization, filterable, each provable. */
export function Provenance() {
  const trpc = useTRPC();
  const [decision, setDecision] = useState<"" | "allowed" | "denied">("");
  const [operation, setOperation] = useState("");
  const [actor, setActor] = useState("");
  const [selected, setSelected] = useState<ProvenanceRecord | null>(null);
  const filters = { limit: 25, ...(decision ? { decision } : {}), ...(operation ? { operation } : {}), ...(actor ? { actor } : {}) };
  const list = useInfiniteQuery(trpc.provenance.list.infiniteQueryOptions(filters, { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined, refetchInterval: 5_000 }));
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<ProvenanceRecord, unknown>[] = [
    { header: "#", cell: ({ row }) => <span className="tabular-nums text-muted-foreground">{row.original.seq}</span> },
    { header: "When", cell: ({ row }) => <span className="whitespace-nowrap text-xs" title={row.original.timestamp}>{ago(row.original.timestamp)}</span> },
    { header: "Operation", cell: ({ row }) => <Mono>{row.original.operation}</Mono> },
    { header: "Who acted", cell: ({ row }) => <Did value={row.original.actor_did} /> },
    { header: "Allowed by", cell: ({ row }) => <Did value={row.original.grantor_did} /> },
    { header: "Decision", cell: ({ row }) => <span className="flex items-center gap-2"><StatusBadge status={row.original.decision} /><span className="text-xs text-muted-foreground">{row.original.status}</span></span> },
  ];
  return (
    <>
      <PageHeader title="Provenance" description="One immutable record per governed call, allowed or refused, in a Merkle tree whose signed checkpoints anyone can verify." />
      <div className="mb-3 grid grid-cols-1 gap-3 md:grid-cols-3">
        <div className="space-y-1">
          <Label htmlFor="f-decision">Decision</Label>
          <NativeSelect id="f-decision" value={decision} onChange={(e) => setDecision(e.target.value as typeof decision)}>
            <option value="">Any</option>
            <option value="allowed">Allowed</option>
            <option value="denied">Denied</option>
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-operation">Operation</Label>
          <Input id="f-operation" placeholder="GET /v1/passports" value={operation} onChange={(e) => setOperation(e.target.value)} />
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-actor">Actor DID</Label>
          <Input id="f-actor" placeholder="did:key:…" value={actor} onChange={(e) => setActor(e.target.value.trim())} />
        </div>
      </div>
      <DataTable caption="Provenance records" columns={columns} data={rows} loading={list.isFetching} error={list.error ? problemOf(list.error).detail : null} empty="No records match these filters." hasMore={list.hasNextPage} onMore={() => void list.fetchNextPage()} onRowClick={setSelected} />
      {selected ? <RecordDetail record={selected} onClose={() => setSelected(null)} /> : null}
    </>
  );
}

function RecordDetail({ record, onClose }: { record: ProvenanceRecord; onClose(): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [result, setResult] = useState<BrowserVerification | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    try {
      const proof = await queryClient.fetchQuery(trpc.provenance.proof.queryOptions({ id: record.id }, { staleTime: 0 }));
      setResult(await verifyInBrowser(record as unknown as Record<string, unknown>, proof));
    } catch (e) {
      setError(problemOf(e).detail);
    } finally {
      setBusy(false);
    }
  };
  const fields: [string, unknown][] = Object.entries(record);
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={`Record #${record.seq}`} description={record.operation}>
      <dl className="grid max-h-72 grid-cols-[9rem_1fr] gap-x-3 gap-y-1 overflow-auto text-xs">
        {fields.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="text-muted-foreground">{k}</dt>
            <dd className="break-all font-mono">{v === null ? "null" : String(v)}</dd>
          </div>
        ))}
      </dl>
      <div className="mt-4 flex items-center gap-3">
        <Button onClick={() => void verify()} disabled={busy}>
          <ShieldCheck className="h-4 w-4" aria-hidden /> {busy ? "Verifying…" : "Verify inclusion in this browser"}
        </Button>
      </div>
      {error ? <p role="alert" className="mt-3 text-sm text-destructive">{error}</p> : null}
      {result ? (
        <ul className="mt-3 space-y-1 text-sm" aria-label="Verification result" data-testid="verification">
          <Check ok={result.leafMatches} label="The record's content hashes to its leaf hash (RFC 8785, SHA-256)" />
          <Check ok={result.pathLeadsToRoot} label={`The inclusion path leads to the root of the tree of ${result.treeSize} records (RFC 9162)`} />
          <Check ok={result.signatureValid} label="The checkpoint carries a valid Ed25519 signature of the ledger's key" />
          <li className="pl-6 text-xs text-muted-foreground" data-testid="key-pin">
            {result.keyPinned === "changed"
              ? `Warning: the ledger's key (${result.keyFingerprint}) differs from the one this browser saw before. Compare it with GET /v1/provenance/verifier-key from a source you trust.`
              : result.keyPinned === "first-use"
                ? `Key ${result.keyFingerprint} remembered by this browser (trust on first use); compare it with the operator's published verifier key.`
                : `Key ${result.keyFingerprint} is the one this browser pinned earlier.`}
          </li>
        </ul>
      ) : null}
    </Dialog>
  );
}

function Check({ ok, label }: { ok: boolean; label: string }) {
  return (
    <li className="flex items-start gap-2">
      {ok ? <CheckCircle2 className="mt-0.5 h-4 w-4 text-success" aria-label="passed" /> : <XCircle className="mt-0.5 h-4 w-4 text-destructive" aria-label="failed" />}
      <span>{label}</span>
    </li>
  );
}
