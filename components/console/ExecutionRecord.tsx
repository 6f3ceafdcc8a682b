"use client";

import Link from "next/link";
import { Badge } from "@/components/ui/primitives";
import { JsonBlock, when, type Execution } from "./executionFormat";
import { Did } from "./format";

type ErrorJson = Record<string, unknown>;
type Attempt = NonNullable<Execution["attempts"]>[number];

const ATTEMPT_TONES = {
  running: "primary",
  completed: "success",
  failed: "danger",
  cancelled: "warning",
  lost: "warning",
  paused: "primary",
} as const;

/**
 * An execution's (or an attempt's) error as people read it: the code, the error's name and message
 * as text, the stack folded (opened on demand, never a JSON string full of `\n`), and any other
 * field as a line of its own.
 */
export function ErrorText({
  error,
  compact,
  nameOf,
}: {
  error: ErrorJson;
  compact?: boolean;
  nameOf?: (did: string) => string | undefined;
}) {
  const { code, name, message, stack, ...rest } = error;
  const others = Object.entries(rest).filter(([, v]) => v !== null && v !== undefined);
  return (
    <div className="space-y-1 text-sm" data-testid="error-text">
      <p className="flex flex-wrap items-baseline gap-2">
        {typeof code === "string" ? (
          <Badge tone="danger" className="font-mono">
            {code}
          </Badge>
        ) : null}
        {typeof name === "string" && name !== code ? (
          <span className="font-mono text-xs font-semibold">{name}</span>
        ) : null}
        {typeof message === "string" ? (
          <span className="whitespace-pre-wrap [overflow-wrap:anywhere]">{message}</span>
        ) : null}
      </p>
      {typeof stack === "string" && stack.trim() !== "" ? (
        <details className="text-xs" data-testid="error-stack">
          <summary className="cursor-pointer text-muted-foreground hover:text-foreground">Stack trace</summary>
          <pre
            tabIndex={0}
            aria-label="Stack trace"
            className="mt-1 max-h-60 overflow-auto rounded-md bg-muted p-2 font-mono text-xs"
          >
            {stack}
          </pre>
        </details>
      ) : null}
      {others.length > 0 && !compact ? (
        <dl className="grid grid-cols-[auto_1fr] gap-x-3 text-xs text-muted-foreground">
          {others.map(([k, v]) => (
            <div key={k} className="contents">
              <dt className="font-mono">{k}</dt>
              <dd className="min-w-0 [overflow-wrap:anywhere]">
                {typeof v === "string" && v.startsWith("did:") ? (
                  <Did value={v} name={nameOf?.(v)} truncate />
                ) : typeof v === "object" ? (
                  JSON.stringify(v)
                ) : (
                  String(v)
                )}
              </dd>
            </div>
          ))}
        </dl>
      ) : null}
    </div>
  );
}

/** What the handler was given, or why it is not shown. */
export function ExecutionInput({ execution }: { execution: Execution }) {
  if (execution.input_redacted)
    return (
      <p className="text-sm text-muted-foreground">
        Redacted: the agent&apos;s manifest sets <code className="font-mono">redact_input</code>, so the input is kept
        for the run but never shown.
      </p>
    );
  if (execution.input === undefined || execution.input === null)
    return <p className="text-sm text-muted-foreground">No input was given.</p>;
  return <JsonBlock value={execution.input} label="Input JSON" />;
}

/** Every attempt of the run, oldest first, with how each ended. */
export function ExecutionAttempts({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p className="text-sm text-muted-foreground">Not started yet.</p>;
  return (
    <ol className="space-y-2" aria-label="Attempts" data-testid="execution-attempts">
      {attempts.map((a) => (
        <li key={a.attempt} className="rounded-md border border-border p-3">
          <div className="flex flex-wrap items-center gap-2 text-sm">
            <span className="font-medium tabular-nums">Attempt {a.attempt}</span>
            <Badge tone={ATTEMPT_TONES[a.status]}>{a.status}</Badge>
            <span className="text-xs text-muted-foreground">
              {when(a.started_at)} → {a.ended_at ? when(a.ended_at) : "running"}
              {a.ended_at ? (
                <span className="tabular-nums">
                  {" "}
                  ({((Date.parse(a.ended_at) - Date.parse(a.started_at)) / 1000).toFixed(2)} s)
                </span>
              ) : null}
            </span>
            {a.worker_id ? <span className="font-mono text-xs text-muted-foreground">{a.worker_id}</span> : null}
          </div>
          {a.status === "paused" ? (
            <PauseText error={a.error} />
          ) : a.error ? (
            <div className="mt-2">
              <ErrorText error={a.error} compact />
            </div>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

/**
 * A pause is not a failure: the attempt ended to wait for a person's decision without holding a
 * sandbox, and spent no attempt. It says what it waited for, the approval linked.
 */
function PauseText({ error }: { error?: ErrorJson | null }) {
  const message = typeof error?.message === "string" ? error.message : "Waiting for an approval";
  const approvalId = /\bapr_[0-9a-z]+/.exec(message)?.[0];
  return (
    <p className="mt-2 text-sm text-muted-foreground" data-testid="attempt-paused">
      Paused, spending no attempt: {message}
      {approvalId ? (
        <>
          {" "}
          <Link className="text-primary underline" href={`/approvals?id=${approvalId}`}>
            Open the approval
          </Link>
        </>
      ) : null}
    </p>
  );
}
