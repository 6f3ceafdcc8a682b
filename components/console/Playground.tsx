"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { Plus, Send, X } from "lucide-react";
import Link from "next/link";
import { useFieldArray, useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, Input, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import {
  ReasoningBudgetMode,
  ReasoningComplexity,
  ReasoningMessage,
  ReasoningTask,
  ReasoningThinkRequest,
} from "@/server/reasoning/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { applyProblem, useTRPC } from "./Providers";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"];
type Answer = Outputs["think"];

// The default first: the rest in the schema's order (the routing rules' form shows them so too).
export const TASKS = ["general", ...ReasoningTask.exclude(["general"]).options] as const;
const BUDGETS: Record<z.infer<typeof ReasoningBudgetMode>, string> = {
  optimize: "optimize: quality against price",
  minimize: "minimize: the cheapest good enough",
  unlimited: "unlimited: the best, price ignored",
};

export const usdExact = (n: number) => (n === 0 ? "$0" : n < 0.0001 ? `$${n.toPrecision(3)}` : `$${n.toFixed(6)}`);
const ATTEMPT_TONE = { succeeded: "success", error: "danger", timeout: "warning", rate_limited: "warning" } as const;

/** A number typed as text: blank leaves it out of the call, anything else must pass the request's own bound. */
function numberText(bound: z.ZodType, message: string) {
  return z.string().transform((text, ctx) => {
    const value = text.trim() === "" ? undefined : Number(text);
    if (!bound.safeParse(value).success) {
      ctx.addIssue({ code: "custom", message });
      return z.NEVER;
    }
    return value;
  });
}

const PlaygroundForm = z.object({
  messages: z.array(
    ReasoningMessage.extend({
      content: ReasoningMessage.shape.content.refine((c) => c.trim() !== "", "Write the message, or remove it."),
    }),
  ),
  task: ReasoningTask,
  complexity: ReasoningComplexity,
  budget: ReasoningBudgetMode,
  pinned_model: z.string(),
  temperature: numberText(ReasoningThinkRequest.shape.temperature, "A number from 0 to 2."),
  max_tokens: numberText(ReasoningThinkRequest.shape.max_tokens, "A whole number from 1 to 1,000,000."),
});

/**
 * The playground: one routed call through the same governed `think` as /v1 (under the signed-in
 * person's session delegation and its budget), then what the router decided and why, each attempt
 * of the fallback chain, the usage and the cost.
 */
export function Playground() {
  const trpc = useTRPC();
  const models = useQuery(trpc.reasoning.models.queryOptions({}));
  const form = useForm<z.input<typeof PlaygroundForm>, unknown, z.output<typeof PlaygroundForm>>({
    resolver: zodResolver(PlaygroundForm),
    defaultValues: {
      messages: [{ role: "user", content: "Summarize why delegations expire, in one sentence." }],
      task: "general",
      complexity: "medium",
      budget: "optimize",
      pinned_model: "",
      temperature: "",
      max_tokens: "256",
    },
  });
  const messages = useFieldArray({ control: form.control, name: "messages" });
  const think = useMutation(trpc.reasoning.think.mutationOptions({ onError: (e) => applyProblem(form, e) }));
  const callId = think.data?.metadata.call_id;
  const call = useQuery({ ...trpc.reasoning.calls.get.queryOptions({ id: callId ?? "" }), enabled: !!callId });
  const errors = form.formState.errors;

  return (
    <>
      <PageHeader
        title="Playground"
        description="A routed model call under your session's delegation and its budget: the same governed call as POST /v1/reasoning/think, recorded with its provenance."
      />
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
        <Card className="min-w-0 p-4">
          <form
            noValidate
            onSubmit={form.handleSubmit(({ pinned_model, temperature, max_tokens, ...v }) =>
              think.mutate({
                ...v,
                ...(pinned_model ? { pinned_model } : {}),
                ...(temperature !== undefined ? { temperature } : {}),
                ...(max_tokens !== undefined ? { max_tokens } : {}),
              }),
            )}
            className="space-y-4"
            aria-label="Routed call"
          >
            <fieldset className="space-y-3">
              <legend className="mb-1 text-sm font-semibold">Messages</legend>
              {messages.fields.map((m, i) => (
                <div key={m.id} className="space-y-1.5" data-testid="message">
                  <div className="flex items-center gap-2">
                    <Label htmlFor={`msg-role-${m.id}`} className="sr-only">
                      Role of message {i + 1}
                    </Label>
                    <NativeSelect id={`msg-role-${m.id}`} className="w-36" {...form.register(`messages.${i}.role`)}>
                      {ReasoningMessage.shape.role.options.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </NativeSelect>
                    {messages.fields.length > 1 ? (
                      <Button
                        type="button"
                        variant="ghost"
                        size="sm"
                        aria-label={`Remove message ${i + 1}`}
                        onClick={() => messages.remove(i)}
                      >
                        <X className="h-4 w-4" aria-hidden />
                      </Button>
                    ) : null}
                  </div>
                  <FormField
                    id={`msg-content-${m.id}`}
                    label={`Message ${i + 1}`}
                    labelClassName="sr-only"
                    error={errors.messages?.[i]?.content?.message}
                  >
                    {(control) => (
                      <textarea
                        {...control}
                        rows={3}
                        maxLength={100_000}
                        className="w-full rounded-md border border-border bg-card px-3 py-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring aria-[invalid=true]:border-destructive"
                        {...form.register(`messages.${i}.content`)}
                      />
                    )}
                  </FormField>
                </div>
              ))}
              <Button
                type="button"
                variant="outline"
                size="sm"
                disabled={messages.fields.length >= 200}
                onClick={() => messages.append({ role: "user", content: "" }, { shouldFocus: false })}
              >
                <Plus className="mr-1 h-4 w-4" aria-hidden />
                Add message
              </Button>
            </fieldset>
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
              <FormField id="pg-task" label="Task">
                {(control) => (
                  <NativeSelect {...control} {...form.register("task")}>
                    {TASKS.map((t) => (
                      <option key={t}>{t}</option>
                    ))}
                  </NativeSelect>
                )}
              </FormField>
              <FormField id="pg-complexity" label="Complexity">
                {(control) => (
                  <NativeSelect {...control} {...form.register("complexity")}>
                    {ReasoningComplexity.options.map((c) => (
                      <option key={c}>{c}</option>
                    ))}
                  </NativeSelect>
                )}
              </FormField>
              <FormField id="pg-budget" label="Budget" className="sm:col-span-2">
                {(control) => (
                  <NativeSelect {...control} {...form.register("budget")}>
                    {Object.entries(BUDGETS).map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </NativeSelect>
                )}
              </FormField>
              <FormField
                id="pg-pinned"
                label="Pinned model (optional)"
                className="sm:col-span-2"
                error={errors.pinned_model?.message}
              >
                {(control) => (
                  <NativeSelect {...control} {...form.register("pinned_model")}>
                    <option value="">None: let the router choose</option>
                    {(models.data?.models ?? []).map((m) => (
                      <option key={`${m.provider}/${m.model_id}`} value={`${m.provider}/${m.model_id}`}>
                        {m.provider}/{m.model_id}
                      </option>
                    ))}
                  </NativeSelect>
                )}
              </FormField>
              <FormField id="pg-temperature" label="Temperature (0–2)" error={errors.temperature?.message}>
                {(control) => (
                  <Input
                    {...control}
                    inputMode="decimal"
                    placeholder="provider default"
                    {...form.register("temperature")}
                  />
                )}
              </FormField>
              <FormField id="pg-max-tokens" label="Max tokens" error={errors.max_tokens?.message}>
                {(control) => <Input {...control} inputMode="numeric" {...form.register("max_tokens")} />}
              </FormField>
            </div>
            <div className="flex flex-wrap items-center gap-3">
              <Button type="submit" disabled={think.isPending}>
                <Send className="mr-1 h-4 w-4" aria-hidden />
                {think.isPending ? "Calling…" : "Call"}
              </Button>
              <Link href="/reasoning/spend" className="text-sm text-primary underline-offset-4 hover:underline">
                Spend
              </Link>
            </div>
            {errors.root?.message ? (
              <p role="alert" className="text-sm text-destructive [overflow-wrap:anywhere]">
                {errors.root.message}
              </p>
            ) : null}
          </form>
        </Card>
        <section aria-label="Result" className="min-w-0">
          {think.data ? (
            <Result answer={think.data} attempts={call.data?.attempts} />
          ) : (
            <Card className="p-4 text-sm text-muted-foreground">
              The answer, the routing decision, each attempt, the usage and the cost appear here.
            </Card>
          )}
        </section>
      </div>
    </>
  );
}

function Result({ answer, attempts }: { answer: Answer; attempts: Outputs["calls"]["get"]["attempts"] | undefined }) {
  const { data, metadata } = answer;
  const decision = metadata.routingDecision;
  return (
    <div className="space-y-4" data-testid="playground-result">
      <Card className="p-4">
        <h2 className="text-base font-semibold">Answer</h2>
        <p className="mt-2 whitespace-pre-wrap text-sm [overflow-wrap:anywhere]" data-testid="answer-text">
          {data.text}
        </p>
      </Card>
      <Card className="p-4">
        <h2 className="text-base font-semibold">Routing decision</h2>
        <dl className="mt-2 grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
          <dt className="text-muted-foreground">Selected</dt>
          <dd data-testid="selected-model">
            <Mono>
              {data.provider}/{decision.selected}
            </Mono>
          </dd>
          <dt className="text-muted-foreground">Reason</dt>
          <dd className="[overflow-wrap:anywhere]" data-testid="routing-reason">
            {decision.reason}
          </dd>
          <dt className="text-muted-foreground">Alternatives</dt>
          <dd>{decision.alternatives.length ? decision.alternatives.join(", ") : "none"}</dd>
        </dl>
      </Card>
      <Card className="p-4">
        <h2 className="text-base font-semibold">Usage and cost</h2>
        <dl className="mt-2 grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm tabular-nums">
          <dt className="text-muted-foreground">Input tokens</dt>
          <dd>{data.usage.inputTokens}</dd>
          <dt className="text-muted-foreground">Output tokens</dt>
          <dd>{data.usage.outputTokens}</dd>
          <dt className="text-muted-foreground">Cost</dt>
          <dd data-testid="call-cost">{usdExact(metadata.costUsd)}</dd>
          <dt className="text-muted-foreground">Duration</dt>
          <dd>{metadata.durationMs} ms</dd>
          <dt className="text-muted-foreground">Call</dt>
          <dd>
            <Mono>{metadata.call_id}</Mono>
          </dd>
        </dl>
      </Card>
      <Card className="p-4">
        <h2 className="text-base font-semibold">Attempts</h2>
        {attempts === undefined ? (
          <p className="mt-2 text-sm text-muted-foreground">Loading the call&apos;s record…</p>
        ) : (
          <ol className="mt-2 space-y-2 text-sm" aria-label="Attempts">
            {attempts.map((a) => (
              <li key={a.attempt} className="flex flex-wrap items-center gap-2">
                <span className="tabular-nums text-muted-foreground">{a.attempt}.</span>
                <Mono>
                  {a.provider}/{a.model}
                </Mono>
                <Badge tone={ATTEMPT_TONE[a.status]}>{a.status}</Badge>
                <span className="tabular-nums text-muted-foreground">
                  {a.latency_ms} ms · {usdExact(a.cost_usd)}
                </span>
                {a.error_message ? (
                  <span className="w-full text-xs text-destructive [overflow-wrap:anywhere]">{a.error_message}</span>
                ) : null}
              </li>
            ))}
          </ol>
        )}
      </Card>
    </div>
  );
}
