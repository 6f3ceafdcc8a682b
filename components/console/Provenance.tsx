"use client";

import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import { CheckCircle2, Download, ShieldCheck, XCircle } from "lucide-react";
import { useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { Input, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import { verifyInBrowser, type BrowserVerification } from "@/components/provenance/verifyInBrowser";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { problemOf, useTRPC } from "./Providers";
import { usePassportNames } from "./usePassportNames";
import { useSearchParamsWriter } from "./useSearchParamsWriter";

type ProvenanceRecord = inferRouterOutputs<AppRouter>["provenance"]["list"]["data"][number];
type ListInput = inferRouterInputs<AppRouter>["provenance"]["list"];

/** The explorer's filters as they appear in its URL, so a filtered view can be shared or reloaded. */
// `resource` has no control: links from other pages (an execution's records) set it.
const FILTER_KEYS = ["decision", "operation", "actor", "from", "to", "console_reads", "resource"] as const;
type FilterState = Record<(typeof FILTER_KEYS)[number], string>;

function stateFrom(params: URLSearchParams): FilterState {
  return Object.fromEntries(FILTER_KEYS.map((k) => [k, params.get(k) ?? ""])) as FilterState;
}

/** An ISO time as a `datetime-local` value, in the browser's time zone. */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** The list's input from the filters; malformed values (a hand-edited URL) are left out, not sent. */
function listInput(state: FilterState): Omit<ListInput, "limit" | "cursor"> {
  const time = (v: string) => (v && !Number.isNaN(new Date(v).getTime()) ? new Date(v).toISOString() : undefined);
  const from = time(state.from);
  const to = time(state.to);
  return {
    ...(state.decision === "allowed" || state.decision === "denied" ? { decision: state.decision } : {}),
    ...(state.operation.trim() ? { operation: state.operation.trim() } : {}),
    ...(state.actor.trim() ? { actor: state.actor.trim() } : {}),
    ...(state.resource.trim() ? { resource: state.resource.trim() } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    console_reads: state.console_reads === "include" ? "include" : "exclude",
  };
}

const PAGE = 100;
const EXPORT_LIMIT = 10_000;

/** The provenance explorer: every governed call of the organization, filterable, each provable. */
/** `traceUrlTemplate`: SVC_TRACE_URL_TEMPLATE (a Jaeger or Tempo URL with `{trace_id}`), when set. */
export function Provenance({ traceUrlTemplate = null }: { traceUrlTemplate?: string | null } = {}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const params = useSearchParams();
  const nameOf = usePassportNames();
  // The controls answer at once; the URL and the query follow once the person pauses typing.
  const [state, setState] = useState<FilterState>(() => stateFrom(new URLSearchParams(params.toString())));
  const [applied, setApplied] = useState(state);
  const [selected, setSelected] = useState<ProvenanceRecord | null>(null);
  // `?record=<prv_…>` (a marketplace invocation's record) opens that record over the list.
  const linkedId = params.get("record");
  const linked = useQuery(trpc.provenance.get.queryOptions({ id: linkedId ?? "" }, { enabled: !!linkedId }));
  useEffect(() => {
    if (linked.data) setSelected(linked.data as ProvenanceRecord);
  }, [linked.data]);
  const [exporting, setExporting] = useState<number | null>(null);
  const set = (changes: Partial<FilterState>) => setState((s) => ({ ...s, ...changes }));
  // A URL this explorer did not write (a link to it, Back) resets the filters to the URL's; one it
  // wrote, rendering late, does not put back filters changed since.
  const writeParams = useSearchParamsWriter((query) => {
    const fromUrl = stateFrom(new URLSearchParams(query));
    setState(fromUrl);
    setApplied(fromUrl);
  });

  useEffect(() => {
    const t = setTimeout(() => {
      setApplied(state);
      writeParams((next) => {
        for (const k of [...next.keys()]) next.delete(k);
        for (const k of FILTER_KEYS) if (state[k].trim()) next.set(k, state[k].trim());
      });
    }, 300);
    return () => clearTimeout(t);
  }, [state, writeParams]);

  const filters = listInput(applied);
  const list = useInfiniteQuery(
    trpc.provenance.list.infiniteQueryOptions(
      { limit: 25, ...filters },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined, refetchInterval: 5_000 },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];

  /** Downloads every record matching the filters (newest first, up to EXPORT_LIMIT) as NDJSON. */
  const exportRecords = async () => {
    setExporting(0);
    const lines: string[] = [];
    try {
      let cursor: string | undefined;
      do {
        const page = await queryClient.fetchQuery(
          trpc.provenance.list.queryOptions(
            { limit: PAGE, ...filters, ...(cursor ? { cursor } : {}) },
            { staleTime: 0 },
          ),
        );
        for (const r of page.data) lines.push(JSON.stringify(r));
        setExporting(lines.length);
        cursor = page.pagination.next_cursor ?? undefined;
      } while (cursor && lines.length < EXPORT_LIMIT);
      const url = URL.createObjectURL(
        new Blob([lines.join("\n") + (lines.length ? "\n" : "")], { type: "application/x-ndjson" }),
      );
      const a = document.createElement("a");
      a.href = url;
      a.download = `provenance-${new Date().toISOString().replace(/[:.]/g, "-")}.ndjson`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      toast.success(
        cursor
          ? `Exported the newest ${lines.length} records; narrow the filters for older ones.`
          : `Exported ${lines.length} record(s).`,
      );
    } catch (e) {
      toast.error(problemOf(e).detail);
    } finally {
      setExporting(null);
    }
  };

  const columns: ColumnDef<ProvenanceRecord, unknown>[] = [
    // What one scans for leads the row: the decision, as a coloured badge, with the status.
    {
      header: "Decision",
      cell: ({ row }) => (
        <span className="flex items-center gap-2 whitespace-nowrap">
          <StatusBadge status={row.original.decision} />
          <span className="text-xs tabular-nums text-muted-foreground">{row.original.status}</span>
        </span>
      ),
    },
    {
      header: "When",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs" title={row.original.timestamp}>
          {ago(row.original.timestamp)}
        </span>
      ),
    },
    {
      header: "Operation",
      cell: ({ row }) => (
        <Mono className="block max-w-[14rem] truncate whitespace-nowrap" title={row.original.operation}>
          {row.original.operation}
        </Mono>
      ),
    },
    {
      header: "Who acted",
      cell: ({ row }) => (
        <span className="flex max-w-[12rem]">
          <Did value={row.original.actor_did} name={nameOf(row.original.actor_did)} truncate />
        </span>
      ),
    },
    {
      header: "Allowed by",
      cell: ({ row }) => (
        <span className="flex max-w-[12rem]">
          <Did value={row.original.grantor_did} name={nameOf(row.original.grantor_did)} truncate />
        </span>
      ),
    },
    {
      header: "#",
      cell: ({ row }) => <span className="tabular-nums text-xs text-muted-foreground">{row.original.seq}</span>,
    },
  ];
  return (
    <>
      <PageHeader
        title="Provenance"
        description="One immutable record per governed call, allowed or refused, in a Merkle tree whose signed checkpoints anyone can verify."
        actions={
          <Button
            variant="outline"
            onClick={() => void exportRecords()}
            disabled={exporting !== null}
            title="Download the records matching these filters, one JSON record per line"
          >
            <Download className="h-4 w-4" aria-hidden />{" "}
            {exporting !== null ? `Exporting… ${exporting}` : "Export NDJSON"}
          </Button>
        }
      />
      <div className="mb-3 grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-5">
        <div className="space-y-1">
          <Label htmlFor="f-decision">Decision</Label>
          <NativeSelect id="f-decision" value={state.decision} onChange={(e) => set({ decision: e.target.value })}>
            <option value="">Any</option>
            <option value="allowed">Allowed</option>
            <option value="denied">Denied</option>
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-operation">Operation starts with</Label>
          <Input
            id="f-operation"
            placeholder="GET /v1/passports"
            value={state.operation}
            onChange={(e) => set({ operation: e.target.value })}
          />
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-actor">Actor DID</Label>
          <Input
            id="f-actor"
            placeholder="did:key:…"
            value={state.actor}
            onChange={(e) => set({ actor: e.target.value })}
          />
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-from">From</Label>
          <Input
            id="f-from"
            type="datetime-local"
            value={toLocalInput(state.from)}
            onChange={(e) => set({ from: e.target.value ? new Date(e.target.value).toISOString() : "" })}
          />
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-to">Until</Label>
          <Input
            id="f-to"
            type="datetime-local"
            value={toLocalInput(state.to)}
            onChange={(e) => set({ to: e.target.value ? new Date(e.target.value).toISOString() : "" })}
          />
        </div>
      </div>
      <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
        <label className="flex items-center gap-2 text-sm text-muted-foreground">
          <input
            type="checkbox"
            checked={state.console_reads === "include"}
            onChange={(e) => set({ console_reads: e.target.checked ? "include" : "" })}
          />
          Show the console&apos;s own page-view reads
        </label>
        {FILTER_KEYS.some((k) => state[k]) ? (
          <Button variant="ghost" size="sm" onClick={() => setState(stateFrom(new URLSearchParams()))}>
            Clear filters
          </Button>
        ) : null}
      </div>
      <DataTable
        caption="Provenance records"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No records match these filters."
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={setSelected}
      />
      {selected ? (
        <RecordDetail
          record={selected}
          nameOf={nameOf}
          traceUrlTemplate={traceUrlTemplate}
          onClose={() => setSelected(null)}
        />
      ) : null}
    </>
  );
}

const DID_FIELDS = new Set(["org_did", "actor_did", "grantor_did"]);

function RecordDetail({
  record,
  nameOf,
  traceUrlTemplate,
  onClose,
}: {
  record: ProvenanceRecord;
  nameOf(did: string | null): string | undefined;
  traceUrlTemplate: string | null;
  onClose(): void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [result, setResult] = useState<BrowserVerification | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    try {
      const proof = await queryClient.fetchQuery(
        trpc.provenance.proof.queryOptions({ id: record.id }, { staleTime: 0 }),
      );
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
      {/* Hashes and DIDs wrap: the dialog scrolls as a whole, with no box scrolling inside it. */}
      <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-xs sm:grid-cols-[9rem_1fr]">
        {fields.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="pt-1 text-muted-foreground sm:pt-0">{k}</dt>
            <dd className="break-all font-mono">
              {v === null ? "null" : String(v)}
              {DID_FIELDS.has(k) && nameOf(v as string | null) ? (
                <span className="ml-2 break-normal font-sans text-muted-foreground">({nameOf(v as string)})</span>
              ) : null}
            </dd>
          </div>
        ))}
      </dl>
      <div className="mt-4 flex items-center gap-3">
        <Button onClick={() => void verify()} disabled={busy} className="whitespace-normal text-left">
          <ShieldCheck className="h-4 w-4 shrink-0" aria-hidden />{" "}
          {busy ? "Verifying…" : "Verify inclusion in this browser"}
        </Button>
        {traceUrlTemplate && record.trace_id ? (
          <a
            href={traceUrlTemplate.replaceAll("{trace_id}", encodeURIComponent(record.trace_id))}
            target="_blank"
            rel="noreferrer"
            className="text-sm underline underline-offset-4"
          >
            View trace
          </a>
        ) : null}
      </div>
      {error ? (
        <p role="alert" className="mt-3 text-sm text-destructive">
          {error}
        </p>
      ) : null}
      {result ? (
        <ul className="mt-3 space-y-1 text-sm" aria-label="Verification result" data-testid="verification">
          <Check ok={result.leafMatches} label="The record's content hashes to its leaf hash (RFC 8785, SHA-256)" />
          <Check
            ok={result.pathLeadsToRoot}
            label={`The inclusion path leads to the root of the tree of ${result.treeSize} records (RFC 9162)`}
          />
          <Check
            ok={result.signatureValid}
            label="The checkpoint carries a valid Ed25519 signature of the ledger's key"
          />
          <li className="pl-6 text-xs text-muted-foreground [overflow-wrap:anywhere]" data-testid="key-pin">
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
      {ok ? (
        <CheckCircle2 className="mt-0.5 h-4 w-4 shrink-0 text-success" aria-label="passed" />
      ) : (
        <XCircle className="mt-0.5 h-4 w-4 shrink-0 text-destructive" aria-label="failed" />
      )}
      <span>{label}</span>
    </li>
  );
}
