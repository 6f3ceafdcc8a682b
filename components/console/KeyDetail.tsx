"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { BackLink } from "@/components/ui/back-link";
import { Card } from "@/components/ui/primitives";
import { CapabilityUsagePanel, useUsageWindow } from "./CapabilityUsage";
import { PageHeader } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { NarrowingProposal } from "./NarrowingProposal";
import { QueryStatus, useTRPC } from "./Providers";
import { SimulateNarrowing } from "./SimulateNarrowing";

/**
 * A key's (any delegation's) page: who allowed it and who holds it, where it comes from and what
 * derives from it; what it was granted against what it used in a window; a narrower grant
 * simulated against its real calls; and the open narrowing proposal for it, if there is one.
 */
export function KeyDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const usageWindow = useUsageWindow();
  const since = usageWindow.since;
  const d = useQuery(trpc.identity.delegations.get.queryOptions({ id }));
  const usage = useQuery(trpc.identity.delegations.usage.queryOptions({ id, since }));
  const u = usage.data;
  const held = (u?.capabilities ?? []).filter((r) => r.granted).map((r) => r.capability);
  const used = (u?.capabilities ?? []).filter((r) => r.granted && r.calls > 0).map((r) => r.capability);
  const name = d.data?.name ?? (d.data ? d.data.kind.replace("_", " ") : "Delegation");
  return (
    <>
      <BackLink href="/keys">API keys & delegations</BackLink>
      <PageHeader title={name} description={id} />
      {!d.data ? <QueryStatus query={d} /> : null}
      {d.data ? (
        <Card className="mb-8 p-4">
          <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-sm sm:grid-cols-[9rem_1fr] sm:gap-y-2">
            <dt className="text-muted-foreground">Status</dt>
            <dd>
              <StatusBadge status={d.data.status} />
            </dd>
            <dt className="text-muted-foreground">Allowed by</dt>
            <dd className="min-w-0">
              <Did value={d.data.grantor_did} />
            </dd>
            <dt className="text-muted-foreground">Held by</dt>
            <dd className="min-w-0">
              <Did value={d.data.delegate_did} />
            </dd>
            <dt className="text-muted-foreground">Capabilities</dt>
            <dd className="font-mono text-xs [overflow-wrap:anywhere]">{d.data.capabilities.join(", ")}</dd>
            <dt className="text-muted-foreground">Expires</dt>
            <dd className="text-xs" title={d.data.expires_at}>
              {ago(d.data.expires_at)}
            </dd>
            <dt className="text-muted-foreground">Derived from</dt>
            <dd>
              {d.data.parent_id ? (
                <Link
                  className="font-mono text-xs text-primary underline [overflow-wrap:anywhere]"
                  href={`/keys/${d.data.parent_id}`}
                >
                  {d.data.parent_id}
                </Link>
              ) : (
                <span className="text-muted-foreground">a root grant of the organization</span>
              )}
            </dd>
            <dt className="text-muted-foreground">Derived</dt>
            <dd>
              {d.data.derived.length === 0 ? (
                <span className="text-muted-foreground">nothing</span>
              ) : (
                <ul className="space-y-1">
                  {d.data.derived.map((c) => (
                    <li key={c.id} className="flex flex-wrap items-center gap-2">
                      <Link
                        className="font-mono text-xs text-primary underline [overflow-wrap:anywhere]"
                        href={`/keys/${c.id}`}
                      >
                        {c.id}
                      </Link>
                      <StatusBadge status={c.status} />
                    </li>
                  ))}
                </ul>
              )}
            </dd>
          </dl>
        </Card>
      ) : null}
      <CapabilityUsagePanel
        id="usage"
        title="Granted and used"
        level={2}
        className="mb-8"
        window={usageWindow}
        query={usage}
        counted={(u) =>
          `${u.derived_delegations} derived delegation${u.derived_delegations === 1 ? "" : "s"} counted in`
        }
      />
      <section aria-labelledby="narrowing-title" className="mb-8">
        <h2 id="narrowing-title" className="mb-1 text-lg font-semibold">
          Narrowing
        </h2>
        <NarrowingProposal delegationId={id} />
        <h3 id="simulate-title" className="mb-1 mt-4 text-sm font-semibold">
          Simulate narrowing
        </h3>
        <p className="mb-3 text-sm text-muted-foreground">
          Replays its calls in the window, its derived delegations&apos; included, against the capabilities kept, with
          the gate&apos;s own matcher. Nothing changes.
        </p>
        {u ? (
          // A new window starts from its own used capabilities, and no result of the old one.
          <SimulateNarrowing key={since} delegationId={id} since={since} held={held} used={used} />
        ) : null}
      </section>
    </>
  );
}
