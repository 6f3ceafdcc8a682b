"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Play } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { Confirm, Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, FieldError, Input, Mono } from "@/components/ui/primitives";
import { InvokeRequest } from "@/server/agents/schemas";
import { CapabilityUsagePanel, useUsageWindow } from "./CapabilityUsage";
import { useCanAdminister } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { applyProblem, problemOf, useTRPC } from "./Providers";

/** An agent's status, versions and the actions its status allows. */
export function AgentDetail({ id, onClose }: { id: string; onClose(): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canAdminister = useCanAdminister();
  const status = useQuery(
    trpc.agents.status.queryOptions(
      { id },
      { refetchInterval: (q) => (q.state.data?.data.status === "deploying" ? 1_000 : false) },
    ),
  );
  const a = status.data?.data;
  const onMoved = (verb: string) => () => {
    toast.success(`Agent ${verb}`);
    void queryClient.invalidateQueries({ queryKey: trpc.agents.pathKey() });
  };
  const activate = useMutation(
    trpc.agents.activate.mutationOptions({
      onSuccess: onMoved("activated"),
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const deactivate = useMutation(
    trpc.agents.deactivate.mutationOptions({
      onSuccess: onMoved("deactivated"),
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const runtime = a?.runtime;
  const error = runtime?.error ?? (runtime?.last_deploy?.status === "rejected" ? runtime.last_deploy.error : null);
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={a?.name ?? "Agent"} description={a?.description ?? id}>
      {status.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(status.error).detail}
        </p>
      ) : null}
      {a ? (
        <div className="space-y-5">
          <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-sm sm:grid-cols-[8rem_1fr] sm:gap-y-2">
            <dt className="text-muted-foreground">Status</dt>
            <dd data-testid="agent-status">
              <StatusBadge status={a.status} />
            </dd>
            <dt className="text-muted-foreground">Version</dt>
            <dd className="font-mono text-xs">{a.version ?? "—"}</dd>
            <dt className="text-muted-foreground">Limits</dt>
            <dd className="text-xs">
              {runtime?.limits ? `${runtime.limits.memory_mb} MiB · ${runtime.limits.timeout_ms} ms` : "—"}
            </dd>
            <dt className="text-muted-foreground">Bundle</dt>
            <dd>{runtime?.bundle_hash ? <Mono>{runtime.bundle_hash}</Mono> : "—"}</dd>
            <dt className="text-muted-foreground">Deployed</dt>
            <dd className="text-xs">
              {runtime?.deployed_at ? <span title={runtime.deployed_at}>{ago(runtime.deployed_at)}</span> : "—"}
            </dd>
            <dt className="text-muted-foreground">Capabilities</dt>
            <dd className="font-mono text-xs [overflow-wrap:anywhere]">
              {a.capabilities.length ? a.capabilities.join(", ") : "none"}
            </dd>
            {a.passport_id ? (
              <>
                <dt className="text-muted-foreground">Acts as</dt>
                <dd>
                  <Did value={a.passport_id} truncate />
                </dd>
              </>
            ) : null}
            <dt className="text-muted-foreground">Runs</dt>
            <dd>
              <Link className="text-xs text-primary underline" href={`/executions?agent=${encodeURIComponent(a.id)}`}>
                Executions of this agent
              </Link>
            </dd>
          </dl>
          {error ? (
            <p
              role="alert"
              className="rounded-md border border-destructive/40 bg-destructive/10 p-3 text-sm text-destructive [overflow-wrap:anywhere]"
              data-testid="agent-error"
            >
              <span className="font-mono text-xs">{error.code}</span>: {error.message}
            </p>
          ) : null}
          {runtime && runtime.versions.length > 0 ? (
            <section aria-labelledby="agent-versions">
              <h3 id="agent-versions" className="mb-2 text-sm font-semibold">
                Versions
              </h3>
              <ul className="divide-y divide-border rounded-md border border-border text-xs">
                {runtime.versions.map((v) => (
                  <li key={v.seq} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2">
                    <span className="font-mono font-medium">{v.version}</span>
                    <Badge tone={v.status === "ready" ? "success" : v.status === "rejected" ? "danger" : "neutral"}>
                      {v.status}
                    </Badge>
                    <span className="text-muted-foreground" title={v.created_at}>
                      {ago(v.created_at)}
                    </span>
                    <Mono className="basis-full text-muted-foreground">{v.bundle_hash}</Mono>
                    {v.error ? <span className="basis-full text-destructive">{v.error.message}</span> : null}
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
          <AgentUsage id={id} />
          {canAdminister ? (
            <div className="flex flex-wrap gap-2">
              {a.status === "active" ? (
                <Confirm
                  trigger={<Button variant="outline">Deactivate</Button>}
                  title={`Deactivate ${a.name}?`}
                  description="It can no longer be invoked until it is activated again. Executions already running go on."
                  confirmLabel="Deactivate"
                  onConfirm={() => deactivate.mutate({ id })}
                />
              ) : a.status === "inactive" && runtime?.bundle_hash ? (
                <Confirm
                  trigger={<Button variant="outline">Activate</Button>}
                  title={`Activate ${a.name}?`}
                  description={`It can be invoked again, on version ${a.version ?? "—"}.`}
                  confirmLabel="Activate"
                  onConfirm={() => activate.mutate({ id })}
                />
              ) : null}
            </div>
          ) : null}
          {canAdminister && a.status === "active" ? <InvokeForm agentId={id} /> : null}
        </div>
      ) : status.isLoading ? (
        <p className="text-sm text-muted-foreground">Loading…</p>
      ) : null}
    </Dialog>
  );
}

/** What its manifest declares against what its runs used, over the usage window. */
function AgentUsage({ id }: { id: string }) {
  const trpc = useTRPC();
  const usageWindow = useUsageWindow();
  const usage = useQuery(trpc.agents.usage.queryOptions({ id, since: usageWindow.since }));
  return (
    <CapabilityUsagePanel
      id="agent-usage"
      title="Declared and used"
      level={3}
      window={usageWindow}
      query={usage}
      counted={(u) => `${u.runs} run${u.runs === 1 ? "" : "s"} counted in`}
      grant="declared"
    />
  );
}

/** What the invoke form holds (text) read into an InvokeRequest: the JSON parsed, the bounds the area's own. */
const InvokeFields = z.object({
  input: z.string().transform((text, ctx) => {
    if (!text.trim()) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `Not JSON: ${e instanceof Error ? e.message : String(e)}` });
      return z.NEVER;
    }
  }),
  max_attempts: z.string().transform(Number).pipe(InvokeRequest.shape.max_attempts.unwrap()),
  callback_url: z
    .string()
    .trim()
    .transform((url) => url || undefined)
    .pipe(InvokeRequest.shape.callback_url),
});

/** Invoke with a JSON input; the new execution opens at once, its progress live. */
function InvokeForm({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const form = useForm<z.input<typeof InvokeFields>, unknown, z.output<typeof InvokeFields>>({
    resolver: zodResolver(InvokeFields),
    defaultValues: { input: "{}", max_attempts: "3", callback_url: "" },
  });
  const invoke = useMutation(
    trpc.agents.invoke.mutationOptions({
      onSuccess: (e) => {
        toast.success("Execution queued");
        router.push(`/executions/${e.id}`);
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  return (
    <form
      noValidate
      className="space-y-3 border-t border-border pt-4"
      aria-labelledby="invoke-title"
      onSubmit={form.handleSubmit(({ input, max_attempts, callback_url }) =>
        invoke.mutate({ id: agentId, input, max_attempts, ...(callback_url ? { callback_url } : {}) }),
      )}
    >
      <h3 id="invoke-title" className="text-sm font-semibold">
        Invoke
      </h3>
      <FormField id="invoke-input" label="Input (JSON)" error={errors.input?.message}>
        {(control) => (
          <textarea
            {...control}
            rows={5}
            spellCheck={false}
            className="w-full rounded-md border border-border bg-card p-3 font-mono text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring aria-[invalid=true]:border-destructive"
            {...form.register("input")}
          />
        )}
      </FormField>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-[8rem_1fr]">
        <FormField id="invoke-attempts" label="Max attempts" error={errors.max_attempts?.message}>
          {(control) => <Input {...control} type="number" min={1} max={10} {...form.register("max_attempts")} />}
        </FormField>
        <FormField id="invoke-callback" label="Callback URL (optional)" error={errors.callback_url?.message}>
          {(control) => (
            <Input
              {...control}
              type="url"
              placeholder="https://hooks.example.com/svc"
              {...form.register("callback_url")}
            />
          )}
        </FormField>
      </div>
      <FieldError message={errors.root?.message} />
      <div className="flex justify-end">
        <Button type="submit" disabled={invoke.isPending}>
          <Play className="h-4 w-4" aria-hidden /> {invoke.isPending ? "Invoking…" : "Invoke"}
        </Button>
      </div>
    </form>
  );
}
