"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { FormField } from "@/components/ui/form-field";
import { Badge, FieldError, Mono, NativeSelect } from "@/components/ui/primitives";
import { ReasoningComplexity, ReasoningTask } from "@/server/reasoning/schemas";
import type { AppRouter } from "@/server/appRouter";
import { ago } from "./format";
import { TASKS } from "./Playground";
import { applyProblem, problemOf, useTRPC } from "./Providers";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"];
type Rule = Outputs["rules"]["list"]["data"][number];

const RuleForm = z.object({
  task: ReasoningTask,
  complexity: z.enum(["", ...ReasoningComplexity.options]),
  model: z.string().min(1, "Choose the model the rule prefers."),
});
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
  const form = useForm<z.infer<typeof RuleForm>>({
    resolver: zodResolver(RuleForm),
    defaultValues: { task: "coding", complexity: "", model: "" },
  });
  const invalidate = () => void queryClient.invalidateQueries({ queryKey: trpc.reasoning.rules.list.pathKey() });
  const set = useMutation(
    trpc.reasoning.rules.set.mutationOptions({ onSuccess: invalidate, onError: (e) => applyProblem(form, e) }),
  );
  const remove = useMutation(trpc.reasoning.rules.remove.mutationOptions({ onSuccess: invalidate }));
  const errors = form.formState.errors;

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
          onSubmit={form.handleSubmit(({ task, complexity, model }) =>
            set.mutate({ target: complexity ? `${task}:${complexity}` : task, model }),
          )}
          aria-label="Set a routing rule"
          className="mt-3 grid grid-cols-1 items-end gap-3 sm:grid-cols-[repeat(3,minmax(0,1fr))_auto]"
        >
          <FormField id="rule-task" label="Task">
            {(control) => (
              <NativeSelect {...control} {...form.register("task")}>
                {TASKS.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          <FormField id="rule-complexity" label="Complexity">
            {(control) => (
              <NativeSelect {...control} {...form.register("complexity")}>
                <option value="">any</option>
                {ReasoningComplexity.options.map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          {/* Its message shows under the whole row (below), so that the row's fields stay aligned. */}
          <FormField id="rule-model" label="Preferred model">
            {(control) => (
              <NativeSelect {...control} aria-invalid={!!errors.model} {...form.register("model")}>
                <option value="">Choose a model</option>
                {(models.data?.models ?? []).map((m) => (
                  <option key={`${m.provider}/${m.model_id}`} value={`${m.provider}/${m.model_id}`}>
                    {m.provider}/{m.model_id}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          <Button type="submit" disabled={set.isPending}>
            Set rule
          </Button>
          <div className="sm:col-span-4">
            <FieldError message={errors.root?.message ?? errors.model?.message} />
          </div>
        </form>
      ) : null}
    </section>
  );
}
