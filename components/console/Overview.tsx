"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { ReactNode } from "react";
import { Card } from "@/components/ui/primitives";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { useTRPC } from "./Providers";
import { usePassportNames } from "./usePassportNames";

/** What needs attention and what just happened. */
export function Overview() {
  const trpc = useTRPC();
  const me = useQuery(trpc.members.me.queryOptions());
  const status = useQuery(trpc.provenance.status.queryOptions(undefined, { refetchInterval: 5_000 }));
  const keys = useQuery(trpc.identity.delegations.list.queryOptions({ limit: 100, status: "active" }));
  // What happened, not the console's own page views.
  const recent = useQuery(trpc.provenance.list.queryOptions({ limit: 8, console_reads: "exclude" }, { refetchInterval: 5_000 }));
  const denied = useQuery(trpc.provenance.list.queryOptions({ limit: 100, decision: "denied" }));
  const nameOf = usePassportNames();
  const attention: ReactNode[] = [];
  if (status.data && status.data.ledger_sync_status !== "in_sync") attention.push(`The ledger's latest checkpoint is ${status.data.ledger.records_behind} record(s) behind.`);
  const expiring = (keys.data?.data ?? []).filter((k) => new Date(k.expires_at).getTime() - Date.now() < 7 * 86_400_000 && k.kind === "api_key");
  if (expiring.length) attention.push(`${expiring.length} API key(s) expire within a week.`);
  if ((denied.data?.data.length ?? 0) > 0)
    attention.push(
      <>
        {denied.data!.data.length === 100 ? "100 or more" : denied.data!.data.length} refused call(s) recently:{" "}
        <Link href="/provenance?decision=denied" className="font-medium text-primary underline underline-offset-2 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring">
          see them in Provenance
        </Link>
        .
      </>,
    );
  return (
    <>
      <PageHeader title={`Welcome${me.data?.display_name ? `, ${me.data.display_name}` : ""}`} description={me.data ? `${me.data.org_name} · signed in as ${me.data.role}` : undefined} />
      <div className="grid grid-cols-1 gap-4 md:grid-cols-3">
        <Stat label="Passports" value={status.data?.passport_count} href="/passports" />
        <Stat label="Active delegations" value={keys.data?.data.length} href="/keys" />
        <Stat label="Provenance records" value={status.data?.ledger.record_count} hint={status.data ? `checkpoint covers ${status.data.checkpoint_size}` : undefined} href="/provenance" />
      </div>
      <div className="mt-6 grid grid-cols-1 gap-4 lg:grid-cols-2">
        <Card className="p-5">
          <h2 className="font-semibold">Needs attention</h2>
          {attention.length === 0 ? <p className="mt-2 text-sm text-muted-foreground">Nothing right now: the ledger is in sync and no key is about to expire.</p> : <ul className="mt-2 list-disc space-y-1 pl-5 text-sm">{attention.map((a, i) => <li key={i}>{a}</li>)}</ul>}
        </Card>
        <Card className="p-5">
          <h2 className="font-semibold">Recent activity</h2>
          <ul className="mt-2 divide-y divide-border text-sm">
            {(recent.data?.data ?? []).map((r) => (
              <li key={r.id} className="flex flex-wrap items-center justify-between gap-x-3 gap-y-1 py-2">
                <span className="min-w-0 truncate font-mono text-xs">{r.operation}</span>
                <span className="flex min-w-0 items-center gap-2">
                  <Did value={r.actor_did} name={nameOf(r.actor_did)} truncate />
                  <StatusBadge status={r.decision} />
                  <span className="whitespace-nowrap text-xs text-muted-foreground">{ago(r.timestamp)}</span>
                </span>
              </li>
            ))}
          </ul>
        </Card>
      </div>
    </>
  );
}

function Stat({ label, value, hint, href }: { label: string; value: number | undefined; hint?: string; href: string }) {
  return (
    <Link href={href} className="rounded-lg focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring">
      <Card className="p-5 transition-colors hover:bg-muted/50">
        <div className="text-sm text-muted-foreground">{label}</div>
        <div className="mt-1 text-3xl font-semibold tabular-nums">{value ?? "—"}</div>
        {hint ? <div className="mt-1 text-xs text-muted-foreground">{hint}</div> : null}
      </Card>
    </Link>
  );
}
