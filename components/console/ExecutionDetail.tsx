"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ExternalLink } from "lucide-react";
import Link from "next/link";
import { toast } from "sonner";
import { BackLink } from "@/components/ui/back-link";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { Badge, Card } from "@/components/ui/primitives";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import {
  attemptOfBudget,
  ExecutionProgress,
  ExecutionStatusBadge,
  isLive,
  JsonBlock,
  when,
  type Execution,
} from "./executionFormat";
import { ErrorText, ExecutionAttempts, ExecutionInput } from "./ExecutionRecord";
import { useAgentNames } from "./Executions";
import { Did } from "./format";
import { problemOf, QueryStatus, useTRPC } from "./Providers";
import { usePassportNames } from "./usePassportNames";
import { LiveIndicator, useLiveView } from "./useLiveView";

/** One execution, live while it runs: progress, outcome, the lines it logged, its callback's deliveries. */
export function ExecutionDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canAdminister = useCanAdminister();
  const { nameOf } = useAgentNames();
  const passportName = usePassportNames();
  const exec = useQuery(trpc.executions.get.queryOptions({ id }));
  const e = exec.data;
  const logs = useQuery(trpc.executions.logs.queryOptions({ id }));
  const attempts = useQuery(trpc.executions.callbackAttempts.queryOptions({ id }, { enabled: !!e?.callback_url }));
  // Progress, logs and callback deliveries (which go on after the run ended) arrive on the page's one stream.
  const stream = useLiveView(
    trpc.executions.live.subscriptionOptions(
      { id },
      {
        onData: (v) => {
          queryClient.setQueryData(trpc.executions.get.queryKey({ id }), v.execution);
          queryClient.setQueryData(trpc.executions.logs.queryKey({ id }), v.logs);
          queryClient.setQueryData(trpc.executions.callbackAttempts.queryKey({ id }), v.callback_attempts);
        },
      },
    ),
  );
  const cancel = useMutation(
    trpc.executions.cancel.mutationOptions({
      onSuccess: (out) => {
        queryClient.setQueryData(trpc.executions.get.queryKey({ id }), out);
        void queryClient.invalidateQueries({ queryKey: trpc.executions.list.pathKey() });
        toast.success("Execution cancelled");
      },
      onError: (err) => toast.error(problemOf(err).detail),
    }),
  );
  return (
    <>
      <BackLink href="/executions">Executions</BackLink>
      <PageHeader
        title="Execution"
        description={id}
        actions={
          <div className="flex items-center gap-3">
            <LiveIndicator status={stream.status} />
            {canAdminister && e && isLive(e.status) ? (
              <Confirm
                trigger={<Button variant="destructive">Cancel execution</Button>}
                title="Cancel this execution?"
                description="A queued run will not start; a running sandbox is stopped within a second. It ends cancelled and is not retried."
                confirmLabel="Cancel execution"
                onConfirm={() => cancel.mutate({ id })}
              />
            ) : null}
          </div>
        }
      />
      <QueryStatus query={exec} />
      {e ? (
        <div className="space-y-5">
          <Card className="p-4">
            <div className="mb-3 flex flex-wrap items-center gap-2">
              <span data-testid="execution-status">
                <ExecutionStatusBadge status={e.status} />
              </span>
              <AttemptOfBudget execution={e} />
            </div>
            <ExecutionProgress execution={e} />
            <dl className="mt-4 grid grid-cols-1 gap-x-3 gap-y-1 text-sm sm:grid-cols-[9rem_1fr] sm:gap-y-2">
              <dt className="text-muted-foreground">Agent</dt>
              <dd>
                {e.agent_id ? (
                  <Link className="text-primary underline" href={`/executions?agent=${encodeURIComponent(e.agent_id)}`}>
                    {nameOf(e.agent_id) ?? e.agent_id}
                  </Link>
                ) : (
                  "—"
                )}
              </dd>
              <dt className="text-muted-foreground">Invoked by</dt>
              <dd>
                <Did value={e.requester_passport_id ?? null} name={passportName(e.requester_passport_id)} truncate />
              </dd>
              <dt className="text-muted-foreground">Queued</dt>
              <dd className="text-xs">{when(e.queued_at)}</dd>
              <dt className="text-muted-foreground">Started</dt>
              <dd className="text-xs">{when(e.started_at)}</dd>
              <dt className="text-muted-foreground">Ended</dt>
              <dd className="text-xs">{when(e.completed_at)}</dd>
              <dt className="text-muted-foreground">Provenance</dt>
              <dd className="text-xs">
                <Link
                  className="inline-flex items-center gap-1 text-primary underline"
                  href={`/provenance?resource=${encodeURIComponent(e.id)}`}
                >
                  Records of this execution <ExternalLink className="h-3 w-3" aria-hidden />
                </Link>
                {e.provenance_id ? (
                  <span className="ml-2 font-mono text-muted-foreground">(run: {e.provenance_id})</span>
                ) : null}
              </dd>
            </dl>
          </Card>
          <section aria-labelledby="input-title">
            <h2 id="input-title" className="mb-2 text-base font-semibold">
              Input
            </h2>
            <ExecutionInput execution={e} />
          </section>
          {e.result_json ? (
            <section aria-labelledby="result-title">
              <h2 id="result-title" className="mb-2 text-base font-semibold">
                Result
              </h2>
              <JsonBlock value={e.result_json} label="Result JSON" />
            </section>
          ) : null}
          {e.error_json ? (
            <section aria-labelledby="error-title">
              <h2 id="error-title" className="mb-2 text-base font-semibold">
                Error
              </h2>
              <ErrorText error={e.error_json} nameOf={passportName} />
            </section>
          ) : null}
          <section aria-labelledby="attempts-title">
            <h2 id="attempts-title" className="mb-2 text-base font-semibold">
              Attempts
            </h2>
            <ExecutionAttempts attempts={e.attempts ?? []} />
          </section>
          <section aria-labelledby="logs-title">
            <h2 id="logs-title" className="mb-2 text-base font-semibold">
              Logs
            </h2>
            {logs.data && logs.data.data.length > 0 ? (
              <ol
                className="max-h-72 overflow-auto rounded-md bg-muted p-3 font-mono text-xs"
                aria-label="Log lines"
                tabIndex={0}
                data-testid="execution-logs"
              >
                {logs.data.data.map((l) => (
                  <li key={l.seq} className="flex gap-2">
                    {(e.attempts?.length ?? 0) > 1 ? (
                      <span className="shrink-0 text-muted-foreground tabular-nums" title={`Attempt ${l.attempt ?? 1}`}>
                        #{l.attempt ?? 1}
                      </span>
                    ) : null}
                    <span
                      className={
                        l.level === "error"
                          ? "text-destructive"
                          : l.level === "warn"
                            ? "text-warning"
                            : "text-muted-foreground"
                      }
                    >
                      {l.level}
                    </span>
                    <span className="whitespace-pre-wrap [overflow-wrap:anywhere]">{l.line}</span>
                  </li>
                ))}
              </ol>
            ) : (
              <p className="text-sm text-muted-foreground">
                {logs.error ? problemOf(logs.error).detail : "Nothing logged."}
              </p>
            )}
          </section>
          <section aria-labelledby="callback-title">
            <h2 id="callback-title" className="mb-2 text-base font-semibold">
              Callback
            </h2>
            {e.callback_url ? (
              <div className="space-y-2 text-sm">
                <p className="[overflow-wrap:anywhere]">
                  <span className="font-mono text-xs">{e.callback_url}</span>{" "}
                  {e.callback_success === true ? (
                    <Badge tone="success">delivered</Badge>
                  ) : e.callback_success === false ? (
                    <Badge tone="danger">gave up</Badge>
                  ) : (
                    <Badge>pending</Badge>
                  )}
                </p>
                {attempts.data && attempts.data.data.length > 0 ? (
                  <div
                    className="overflow-x-auto rounded-md border border-border"
                    role="region"
                    aria-label="Callback attempts"
                    tabIndex={0}
                  >
                    <table className="w-full text-xs">
                      <caption className="sr-only">Callback attempts</caption>
                      <thead className="bg-muted text-left text-muted-foreground">
                        <tr>
                          <th scope="col" className="px-3 py-1.5 font-medium">
                            #
                          </th>
                          <th scope="col" className="px-3 py-1.5 font-medium">
                            Status
                          </th>
                          <th scope="col" className="px-3 py-1.5 font-medium">
                            Duration
                          </th>
                          <th scope="col" className="px-3 py-1.5 font-medium">
                            When
                          </th>
                          <th scope="col" className="px-3 py-1.5 font-medium">
                            Next try
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {attempts.data.data.map((a) => (
                          <tr key={a.id} className="border-t border-border">
                            <td className="px-3 py-1.5 tabular-nums">{a.attempt}</td>
                            <td className="px-3 py-1.5">
                              <Badge tone={a.success ? "success" : "danger"}>{a.status_code ?? "no answer"}</Badge>
                              {a.error ? <span className="ml-2 text-muted-foreground">{a.error}</span> : null}
                            </td>
                            <td className="px-3 py-1.5 tabular-nums">{a.duration_ms} ms</td>
                            <td className="whitespace-nowrap px-3 py-1.5">{when(a.created_at)}</td>
                            <td className="whitespace-nowrap px-3 py-1.5">{when(a.next_attempt_at)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                ) : (
                  <p className="text-muted-foreground">
                    No delivery attempted yet: the callback is sent when the execution ends.
                  </p>
                )}
              </div>
            ) : (
              <p className="text-sm text-muted-foreground">No callback URL was given.</p>
            )}
          </section>
        </div>
      ) : null}
    </>
  );
}

function AttemptOfBudget({ execution }: { execution: Execution }) {
  const { attempt, max, pauses } = attemptOfBudget(execution);
  return (
    <span className="text-sm text-muted-foreground" data-testid="execution-attempt">
      attempt{" "}
      <span className="tabular-nums">
        {attempt}/{max ?? "—"}
      </span>
      {pauses > 0 ? ` · paused ${pauses === 1 ? "once" : `${pauses} times`} for an approval` : null}
    </span>
  );
}
