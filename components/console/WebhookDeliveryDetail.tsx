"use client";

import type { WebhookDelivery } from "./webhookFormat";

/** Headers as a two-column list, names in monospace (what was sent: signatures, never the secret). */
function HeaderList({ headers }: { headers: Record<string, string> }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p className="text-muted-foreground">none</p>;
  return (
    <dl className="grid grid-cols-1 gap-x-3 gap-y-0.5 font-mono sm:grid-cols-[12rem_1fr]">
      {entries.map(([name, value]) => (
        <div key={name} className="contents">
          <dt className="text-muted-foreground">{name}</dt>
          <dd className="[overflow-wrap:anywhere]">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A JSON body pretty-printed when it parses, as sent otherwise. */
function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

const block = "mt-1 max-h-72 overflow-auto whitespace-pre-wrap rounded bg-muted p-2 font-mono [overflow-wrap:anywhere]";

/**
 * One attempt unfolded, like Svix's message attempt: the event type, the request as sent
 * (headers with the Standard Webhooks signatures, the body) and the answer (status, headers,
 * the first 1 KB of the body) or why none came.
 */
export function DeliveryDetail({ delivery: d }: { delivery: WebhookDelivery }) {
  return (
    <div className="grid min-w-0 grid-cols-1 gap-4 text-xs lg:grid-cols-2" data-testid="delivery-detail">
      <section aria-label="Request" className="min-w-0">
        <h3 className="mb-1 font-semibold">
          Request{" "}
          <span className="font-normal text-muted-foreground">· POST · {d.event_type ?? "event type not logged"}</span>
        </h3>
        {d.request ? (
          <>
            <HeaderList headers={d.request.headers} />
            <pre className={block} tabIndex={0} aria-label="Request body">
              {prettyBody(d.request.body)}
            </pre>
            {d.request.body_truncated ? <p className="mt-1 text-muted-foreground">Cut at 64 KiB.</p> : null}
          </>
        ) : (
          <p className="text-muted-foreground">Not logged (an attempt made before svc kept requests).</p>
        )}
      </section>
      <section aria-label="Response" className="min-w-0">
        <h3 className="mb-1 font-semibold">
          Response{" "}
          <span className="font-normal text-muted-foreground">
            · {d.status_code ?? "no answer"} · {d.duration_ms} ms
          </span>
        </h3>
        {d.error ? (
          <pre className={`${block} text-destructive`} tabIndex={0} aria-label="Error">
            {d.error}
          </pre>
        ) : null}
        {d.response_headers ? <HeaderList headers={d.response_headers} /> : null}
        {d.response_excerpt ? (
          <pre className={block} tabIndex={0} aria-label="Response body">
            {d.response_excerpt}
          </pre>
        ) : !d.error ? (
          <p className="text-muted-foreground">Empty body.</p>
        ) : null}
        {d.response_excerpt && d.response_excerpt.length >= 1024 ? (
          <p className="mt-1 text-muted-foreground">The first 1 KB.</p>
        ) : null}
      </section>
    </div>
  );
}
