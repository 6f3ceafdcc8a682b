"use client";

import { useQuery } from "@tanstack/react-query";
import { ExternalLink } from "lucide-react";
import Link from "next/link";
import { BackLink } from "@/components/ui/back-link";
import { Card } from "@/components/ui/primitives";
import { PageHeader } from "./ConsoleShell";
import { ViaBadge, type BusEvent } from "./Events";
import { JsonBlock, when } from "./executionFormat";
import { useAgentNames } from "./Executions";
import { Did } from "./format";
import { QueryStatus, useTRPC } from "./Providers";
import { KindBadge } from "./webhookFormat";

/** One event: where it came from, its payload, its place in the ledger, and what it caused. */
export function EventDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const event = useQuery(trpc.events.get.queryOptions({ id }));
  const e = event.data;
  return (
    <>
      <BackLink href="/events">Events</BackLink>
      <PageHeader title={e ? e.type : "Event"} description={id} />
      <QueryStatus query={event} />
      {e ? (
        <div className="space-y-5">
          <Card className="p-4">
            <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-sm sm:grid-cols-[10rem_1fr] sm:gap-y-2">
              <dt className="text-muted-foreground">Type</dt>
              <dd className="font-mono text-xs">{e.type}</dd>
              <dt className="text-muted-foreground">Via</dt>
              <dd>
                <ViaBadge via={e.via} />
              </dd>
              <dt className="text-muted-foreground">Source</dt>
              <dd>{e.source ?? <span className="text-muted-foreground">—</span>}</dd>
              <dt className="text-muted-foreground">Sender's id</dt>
              <dd className="font-mono text-xs [overflow-wrap:anywhere]">
                {e.sender_id ?? <span className="text-muted-foreground">—</span>}
              </dd>
              <dt className="text-muted-foreground">Put on the bus by</dt>
              <dd>
                <Did value={e.actor} truncate />
              </dd>
              <dt className="text-muted-foreground">Occurred</dt>
              <dd className="text-xs">{when(e.occurred_at)}</dd>
              <dt className="text-muted-foreground">Chain depth</dt>
              <dd className="text-xs tabular-nums">{e.depth}</dd>
              <dt className="text-muted-foreground">Provenance</dt>
              <dd className="text-xs">
                <Link
                  className="inline-flex items-center gap-1 text-primary underline"
                  href={`/provenance?resource=${encodeURIComponent(e.id)}`}
                >
                  Record of this event <ExternalLink className="h-3 w-3" aria-hidden />
                </Link>
                {e.leaf_index !== null ? <span className="ml-2 text-muted-foreground">leaf {e.leaf_index}</span> : null}
              </dd>
            </dl>
          </Card>
          <Matches event={e} />
          <section aria-labelledby="payload-title">
            <h2 id="payload-title" className="mb-2 text-base font-semibold">
              Payload
            </h2>
            <JsonBlock value={e.payload} label="Payload JSON" />
          </section>
        </div>
      ) : null}
    </>
  );
}

function Matches({ event }: { event: BusEvent }) {
  const { nameOf } = useAgentNames();
  return (
    <section aria-labelledby="matches-title">
      <h2 id="matches-title" className="mb-2 text-base font-semibold">
        Matches <span className="text-sm font-normal text-muted-foreground">({event.matches.length})</span>
      </h2>
      {event.matches.length === 0 ? (
        <p className="rounded-md border border-border p-4 text-sm text-muted-foreground">
          No active webhook or agent trigger matched this event.
        </p>
      ) : (
        <ul className="divide-y divide-border rounded-md border border-border bg-card" data-testid="event-match-list">
          {event.matches.map((m) => (
            <li
              key={`${m.subscription_id}:${m.execution_id ?? m.delivery_id ?? ""}`}
              className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-2 text-sm"
            >
              {m.kind ? (
                <KindBadge kind={m.kind} />
              ) : (
                <span className="text-xs text-muted-foreground">deleted subscription</span>
              )}
              {m.kind === "agent_trigger" ? (
                <>
                  <span>
                    {m.agent_id ? (nameOf(m.agent_id) ?? <span className="font-mono text-xs">{m.agent_id}</span>) : "—"}
                  </span>
                  {m.execution_id ? (
                    <Link
                      className="font-mono text-xs text-primary underline [overflow-wrap:anywhere]"
                      href={`/executions/${m.execution_id}`}
                    >
                      Execution {m.execution_id}
                    </Link>
                  ) : (
                    <span className="text-xs text-muted-foreground">no execution queued</span>
                  )}
                </>
              ) : m.kind === "webhook" ? (
                <Link
                  className="text-primary underline [overflow-wrap:anywhere]"
                  href={`/webhooks/${m.subscription_id}?event=${encodeURIComponent(event.id)}`}
                >
                  Delivery log of {m.subscription_id}
                </Link>
              ) : (
                <span className="font-mono text-xs text-muted-foreground">{m.subscription_id}</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
