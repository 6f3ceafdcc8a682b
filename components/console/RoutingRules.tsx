"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Badge, FieldError, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { ago } from "./format";
import { problemOf, useTRPC } from "./Providers";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"];
type Rule = Outputs["rules"]["list"]["data"][number];

const TASKS = ["general", "reasoning", "coding", "summarization", "creative", "math"] as const;
const COMPLEXITIES = ["simple", "medium", "complex"] as const;
const STATUS_TONE = { active: "success", experimental: "warning", deprecated: "neutral" } as const;

/**
 * The organization's routing rules ("for this task, and complexity, prefer this model"): set by
 * an administrator here or by an applied learning proposal; the router follows a rule while its
 * model is active and fits the budget.
 */
export function RoutingRules({ canAdminister }: { canAdminister: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rules = useQuery(trpc.reasoning.rules.list.queryOptions());
  const models = useQuery(trpc.reasoning.models.queryOptions({}));
  const [task, setTask] = useState<string>("coding");
  const [complexity, setComplexity] = useState<string>("");
  const [model, setModel] = useState<string>("");
  const invalidate = () => void queryClient.invalidateQueries({ queryKey: trpc.reasoning.rules.list.pathKey() });
  const set = useMutation(trpc.reasoning.rules.set.mutationOptions({ onSuccess: invalidate }));
  const remove = useMutation(trpc.reasoning.rules.remove.mutationOptions({ onSuccess: invalidate }));
  const problem = set.error ? problemOf(set.error) : null;
  const [modelMissing, setModelMissing] = useState(false);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setModelMissing(!model);
    if (!model) return;
    set.mutate({ target: complexity ? `${task}:${complexity}` : task, model });
  };

  const columns: ColumnDef<Rule, unknown>[] = [
    { header: "Target", cell: ({ row }) => <Mono>{row.original.target}</Mono> },
    {
      header: "Model",
      cell: ({ row }) => (
        <div className="flex flex-wrap items-center gap-2">
          <Mono>{row.original.model}</Mono>
          {row.original.model_status ? (
            <Badge tone={STATUS_TONE[row.original.model_status]}>{row.original.model_status}</Badge>
          ) : (
            <Badge tone="danger">not in the catalogue</Badge>
          )}
        </div>
      ),
    },
    {
      header: "Set by",
      cell: ({ row }) => (
        <div className="min-w-32">
          {row.original.proposal_id ? (
            <span>
              learning proposal <Mono>{row.original.proposal_id}</Mono>
            </span>
          ) : (
            <Mono className="text-muted-foreground">{row.original.set_by ?? "unknown"}</Mono>
          )}
        </div>
      ),
    },
    { header: "Updated", cell: ({ row }) => <span className="whitespace-nowrap">{ago(row.original.updated_at)}</span> },
    ...(canAdminister
      ? [
          {
            header: "Actions",
            cell: ({ row }: { row: { original: Rule } }) => (
              <Button
                variant="outline"
                size="sm"
                disabled={remove.isPending}
                aria-label={`Remove the rule for ${row.original.target}`}
                onClick={() => remove.mutate({ target: row.original.target })}
              >
                Remove
              </Button>
            ),
          } satisfies ColumnDef<Rule, unknown>,
        ]
      : []),
  ];

  return (
    <section aria-labelledby="rules-heading" className="mt-8">
      <h2 id="rules-heading" className="mb-1 text-lg font-semibold">
        Routing rules
      </h2>
      <p className="mb-3 max-w-prose text-sm text-muted-foreground">
        For a task (and complexity), prefer a model while it is active and fits the budget; the call&apos;s routing
        reason says when a rule chose it. A rule for a complexity wins over the task&apos;s.
      </p>
      <DataTable
        caption="Routing rules"
        columns={columns}
        data={rules.data?.data ?? []}
        loading={rules.isLoading}
        error={rules.error ? problemOf(rules.error).detail : remove.error ? problemOf(remove.error).detail : null}
        empty="No routing rule: every call is routed by the formula."
      />
      {canAdminister ? (
        <form
          noValidate
          onSubmit={submit}
          aria-label="Set a routing rule"
          className="mt-3 grid grid-cols-1 items-end gap-3 sm:grid-cols-[repeat(3,minmax(0,1fr))_auto]"
        >
          <div className="space-y-1.5">
            <Label htmlFor="rule-task">Task</Label>
            <NativeSelect id="rule-task" value={task} onChange={(e) => setTask(e.target.value)}>
              {TASKS.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </NativeSelect>
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="rule-complexity">Complexity</Label>
            <NativeSelect id="rule-complexity" value={complexity} onChange={(e) => setComplexity(e.target.value)}>
              <option value="">any</option>
              {COMPLEXITIES.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </NativeSelect>
          </div>
          <div className="space-y-1.5">
            <Label htmlFor="rule-model">Preferred model</Label>
            <NativeSelect
              id="rule-model"
              value={model}
              aria-invalid={modelMissing || !!problem?.fields.model}
              onChange={(e) => setModel(e.target.value)}
            >
              <option value="">Choose a model</option>
              {(models.data?.models ?? []).map((m) => (
                <option key={`${m.provider}/${m.model_id}`} value={`${m.provider}/${m.model_id}`}>
                  {m.provider}/{m.model_id}
                </option>
              ))}
            </NativeSelect>
          </div>
          <Button type="submit" disabled={set.isPending}>
            Set rule
          </Button>
          <div className="sm:col-span-4">
            <FieldError message={modelMissing ? "Choose the model the rule prefers." : problem?.detail} />
          </div>
        </form>
      ) : null}
    </section>
  );
}
