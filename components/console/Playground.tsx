"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import { Plus, Send, X } from "lucide-react";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { Badge, Card, FieldError, Input, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader } from "./ConsoleShell";
import { problemOf, useTRPC } from "./Providers";

type Inputs = inferRouterInputs<AppRouter>["reasoning"];
type Outputs = inferRouterOutputs<AppRouter>["reasoning"];
type ThinkRequest = Inputs["think"];
type Answer = Outputs["think"];
type Role = NonNullable<ThinkRequest["messages"]>[number]["role"];

const TASKS = ["general", "reasoning", "coding", "summarization", "creative", "math"] as const;
const COMPLEXITIES = ["simple", "medium", "complex"] as const;
const BUDGETS = [
  ["optimize", "optimize: quality against price"],
  ["minimize", "minimize: the cheapest good enough"],
  ["unlimited", "unlimited: the best, price ignored"],
] as const;
const ROLES: Role[] = ["system", "user", "assistant"];

export const usdExact = (n: number) => (n === 0 ? "$0" : n < 0.0001 ? `$${n.toPrecision(3)}` : `$${n.toFixed(6)}`);
const ATTEMPT_TONE = { succeeded: "success", error: "danger", timeout: "warning", rate_limited: "warning" } as const;

interface Message {
  key: number;
  role: Role;
  content: string;
}

/**
 * The playground: one routed call through the same governed `think` as /v1 (under the signed-in
 * person's session delegation and its budget), then what the router decided and why, each attempt
 * of the fallback chain, the usage and the cost.
 */
export function Playground() {
  const trpc = useTRPC();
  const models = useQuery(trpc.reasoning.models.queryOptions({}));
  const [messages, setMessages] = useState<Message[]>([
    { key: 0, role: "user", content: "Summarize why delegations expire, in one sentence." },
  ]);
  const [nextKey, setNextKey] = useState(1);
  const [task, setTask] = useState<(typeof TASKS)[number]>("general");
  const [complexity, setComplexity] = useState<(typeof COMPLEXITIES)[number]>("medium");
  const [budget, setBudget] = useState<(typeof BUDGETS)[number][0]>("optimize");
  const [pinned, setPinned] = useState("");
  const [temperature, setTemperature] = useState("");
  const [maxTokens, setMaxTokens] = useState("256");
  const [local, setLocal] = useState<Record<string, string>>({});
  const think = useMutation(trpc.reasoning.think.mutationOptions());
  const callId = think.data?.metadata.call_id;
  const call = useQuery({ ...trpc.reasoning.calls.get.queryOptions({ id: callId ?? "" }), enabled: !!callId });
  const problem = think.error ? problemOf(think.error) : null;
  const fieldError = (field: string) => local[field] ?? problem?.fields[field];

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errors: Record<string, string> = {};
    const t = temperature.trim() === "" ? undefined : Number(temperature);
    if (t !== undefined && !(t >= 0 && t <= 2)) errors.temperature = "A number from 0 to 2.";
    const m = maxTokens.trim() === "" ? undefined : Number(maxTokens);
    if (m !== undefined && !(Number.isInteger(m) && m >= 1 && m <= 1_000_000))
      errors.max_tokens = "A whole number from 1 to 1,000,000.";
    messages.forEach((msg, i) => {
      if (!msg.content.trim()) errors[`messages.${i}.content`] = "Write the message, or remove it.";
    });
    setLocal(errors);
    if (Object.keys(errors).length > 0) return;
    think.mutate({
      messages: messages.map(({ role, content }) => ({ role, content })),
      task,
      complexity,
      budget,
      ...(pinned ? { pinned_model: pinned } : {}),
      ...(t !== undefined ? { temperature: t } : {}),
      ...(m !== undefined ? { max_tokens: m } : {}),
    });
  };

  const setMessage = (key: number, patch: Partial<Message>) =>
    setMessages((all) => all.map((m) => (m.key === key ? { ...m, ...patch } : m)));

  return (
    <>
      <PageHeader
        title="Playground"
        description="A routed model call under your session's delegation and its budget: the same governed call as POST /v1/reasoning/think, recorded with its provenance."
      />
      <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
        <Card className="min-w-0 p-4">
          <form noValidate onSubmit={submit} className="space-y-4" aria-label="Routed call">
            <fieldset className="space-y-3">
              <legend className="mb-1 text-sm font-semibold">Messages</legend>
              {messages.map((m, i) => (
                <div key={m.key} className="space-y-1.5" data-testid="message">
                  <div className="flex items-center gap-2">
                    <Label htmlFor={`msg-role-${m.key}`} className="sr-only">
                      Role of message {i + 1}
                    </Label>
                    <NativeSelect
                      id={`msg-role-${m.key}`}
                      className="w-36"
                      value={m.role}
                      onChange={(e) => setMessage(m.key, { role: e.target.value as Role })}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </NativeSelect>
                    {messages.length > 1 ? (
                      <Button
                        type="button"
                        variant="ghost"
                        size="sm"
                        aria-label={`Remove message ${i + 1}`}
                        onClick={() => setMessages((all) => all.filter((x) => x.key !== m.key))}
                      >
                        <X className="h-4 w-4" aria-hidden />
                      </Button>
                    ) : null}
                  </div>
                  <Label htmlFor={`msg-content-${m.key}`} className="sr-only">
                    Message {i + 1}
                  </Label>
                  <textarea
                    id={`msg-content-${m.key}`}
                    rows={3}
                    maxLength={100_000}
                    className="w-full rounded-md border border-border bg-card px-3 py-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring aria-[invalid=true]:border-destructive"
                    value={m.content}
                    aria-invalid={!!fieldError(`messages.${i}.content`)}
                    onChange={(e) => setMessage(m.key, { content: e.target.value })}
                  />
                  <FieldError message={fieldError(`messages.${i}.content`)} />
                </div>
              ))}
              <Button
                type="button"
                variant="outline"
                size="sm"
                disabled={messages.length >= 200}
                onClick={() => {
                  setMessages((all) => [...all, { key: nextKey, role: "user", content: "" }]);
                  setNextKey((k) => k + 1);
                }}
              >
                <Plus className="mr-1 h-4 w-4" aria-hidden />
                Add message
              </Button>
            </fieldset>
            <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
              <div className="space-y-1.5">
                <Label htmlFor="pg-task">Task</Label>
                <NativeSelect
                  id="pg-task"
                  value={task}
                  onChange={(e) => setTask(e.target.value as (typeof TASKS)[number])}
                >
                  {TASKS.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </NativeSelect>
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="pg-complexity">Complexity</Label>
                <NativeSelect
                  id="pg-complexity"
                  value={complexity}
                  onChange={(e) => setComplexity(e.target.value as (typeof COMPLEXITIES)[number])}
                >
                  {COMPLEXITIES.map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </NativeSelect>
              </div>
              <div className="space-y-1.5 sm:col-span-2">
                <Label htmlFor="pg-budget">Budget</Label>
                <NativeSelect
                  id="pg-budget"
                  value={budget}
                  onChange={(e) => setBudget(e.target.value as (typeof BUDGETS)[number][0])}
                >
                  {BUDGETS.map(([value, label]) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
                </NativeSelect>
              </div>
              <div className="space-y-1.5 sm:col-span-2">
                <Label htmlFor="pg-pinned">Pinned model (optional)</Label>
                <NativeSelect id="pg-pinned" value={pinned} onChange={(e) => setPinned(e.target.value)}>
                  <option value="">None: let the router choose</option>
                  {(models.data?.models ?? []).map((m) => (
                    <option key={`${m.provider}/${m.model_id}`} value={`${m.provider}/${m.model_id}`}>
                      {m.provider}/{m.model_id}
                    </option>
                  ))}
                </NativeSelect>
                <FieldError message={fieldError("pinned_model")} />
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="pg-temperature">Temperature (0–2)</Label>
                <Input
                  id="pg-temperature"
                  inputMode="decimal"
                  placeholder="provider default"
                  value={temperature}
                  aria-invalid={!!fieldError("temperature")}
                  onChange={(e) => setTemperature(e.target.value)}
                />
                <FieldError message={fieldError("temperature")} />
              </div>
              <div className="space-y-1.5">
                <Label htmlFor="pg-max-tokens">Max tokens</Label>
                <Input
                  id="pg-max-tokens"
                  inputMode="numeric"
                  value={maxTokens}
                  aria-invalid={!!fieldError("max_tokens")}
                  onChange={(e) => setMaxTokens(e.target.value)}
                />
                <FieldError message={fieldError("max_tokens")} />
              </div>
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
            {problem ? (
              <p role="alert" className="text-sm text-destructive [overflow-wrap:anywhere]">
                {problem.detail}
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
