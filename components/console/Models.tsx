"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { Plus } from "lucide-react";
import Link from "next/link";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, FieldError, Input, Mono, NativeSelect } from "@/components/ui/primitives";
import { Skeleton } from "@/components/ui/skeleton";
import { ProviderKind } from "@/server/reasoning/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { applyProblem, problemOf, useTRPC } from "./Providers";
import { RoutingRules } from "./RoutingRules";

type Outputs = inferRouterOutputs<AppRouter>["reasoning"];
type Provider = Outputs["providers"]["list"]["data"][number];
type Model = Outputs["models"]["models"][number];

const usd = (n: number) => (n === 0 ? "–" : `$${n < 1 ? n.toFixed(3) : n.toFixed(2)}`);
const percent = (n: number) => `${(n * 100).toFixed(1)} %`;
const tokens = (n: number) =>
  n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n);
const STATUS_TONE = { active: "success", experimental: "warning", deprecated: "neutral" } as const;

/** The organization's model providers (environment and console) and the catalogue they make. */
export function Models() {
  const trpc = useTRPC();
  const canAdminister = useCanAdminister();
  const [adding, setAdding] = useState(false);
  const providers = useQuery(trpc.reasoning.providers.list.queryOptions());
  const models = useQuery(trpc.reasoning.models.queryOptions({}));
  const none = providers.data !== undefined && providers.data.data.length === 0;
  return (
    <>
      <PageHeader
        title="Models"
        description="The providers routed calls may use, and their models: prices from the price table, latency and success rate measured from your calls."
        actions={
          canAdminister ? (
            <Button onClick={() => setAdding(true)}>
              <Plus className="mr-1 h-4 w-4" aria-hidden />
              Add provider
            </Button>
          ) : undefined
        }
      />
      <h2 className="mb-3 text-lg font-semibold">Providers</h2>
      {providers.error ? (
        <p role="alert" className="text-sm text-destructive">
          The providers could not be loaded: {problemOf(providers.error).detail}
        </p>
      ) : providers.isLoading ? (
        <Skeleton className="h-24 w-full" />
      ) : none ? (
        <NoProvider canAdminister={canAdminister} onAdd={() => setAdding(true)} />
      ) : (
        <div className="grid grid-cols-1 gap-3 md:grid-cols-2">
          {providers.data!.data.map((p) => (
            <ProviderCard key={`${p.source}/${p.name}`} provider={p} canAdminister={canAdminister} />
          ))}
        </div>
      )}
      {none ? null : (
        <>
          <div className="mb-3 mt-8 flex flex-wrap items-baseline justify-between gap-2">
            <h2 className="text-lg font-semibold">Catalogue</h2>
            <Link href="/reasoning/benchmarks" className="text-sm text-primary underline-offset-4 hover:underline">
              Benchmark scores
            </Link>
          </div>
          <DataTable
            caption="Models of the catalogue"
            columns={MODEL_COLUMNS}
            data={models.data?.models ?? []}
            loading={models.isLoading}
            error={models.error ? problemOf(models.error).detail : null}
            empty="The providers list no models yet."
          />
          <RoutingRules canAdminister={canAdminister} />
        </>
      )}
      <AddProviderDialog open={adding} onOpenChange={setAdding} />
    </>
  );
}

function NoProvider({ canAdminister, onAdd }: { canAdminister: boolean; onAdd(): void }) {
  return (
    <Card className="p-6" data-testid="no-provider">
      <h3 className="font-semibold">No model provider yet</h3>
      <p className="mt-1 max-w-prose text-sm text-muted-foreground">
        Routed calls (<Mono>POST /v1/reasoning/think</Mono>) answer 503 until there is one.{" "}
        {canAdminister
          ? "Add an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio, OpenRouter…) or Anthropic here, or"
          : "An administrator can add one in this page, or"}{" "}
        the operator can declare providers in <Mono>SVC_MODEL_PROVIDERS</Mono>:
      </p>
      <pre
        className="mt-3 overflow-x-auto rounded-md bg-muted p-3 text-xs"
        tabIndex={0}
        aria-label="Example configuration"
      >
        {`SVC_MODEL_PROVIDERS='[{"name": "ollama", "kind": "openai-compatible",
  "base_url": "http://localhost:11434/v1"}]'`}
      </pre>
      {canAdminister ? (
        <Button className="mt-4" onClick={onAdd}>
          <Plus className="mr-1 h-4 w-4" aria-hidden />
          Add provider
        </Button>
      ) : null}
    </Card>
  );
}

function ProviderCard({ provider: p, canAdminister }: { provider: Provider; canAdminister: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.reasoning.providers.remove.mutationOptions({
      onSuccess: () => {
        void queryClient.invalidateQueries({ queryKey: trpc.reasoning.providers.list.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.reasoning.models.pathKey() });
      },
    }),
  );
  return (
    <Card className="p-4" data-testid="provider">
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="font-semibold [overflow-wrap:anywhere]">{p.name}</h3>
        <Badge tone="primary">{p.kind}</Badge>
        <Badge>{p.source === "environment" ? "SVC_MODEL_PROVIDERS" : "console"}</Badge>
        {p.problem ? <Badge tone="danger">unreachable</Badge> : <Badge tone="success">ready</Badge>}
      </div>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
        <dt className="text-muted-foreground">Endpoint</dt>
        <dd className="min-w-0">{p.base_url ? <Mono>{p.base_url}</Mono> : "the provider's own"}</dd>
        <dt className="text-muted-foreground">API key</dt>
        <dd>{p.has_api_key ? "set (never shown)" : "none"}</dd>
        <dt className="text-muted-foreground">Models</dt>
        <dd>{p.models ? `${p.models.length} declared` : "read from the provider"}</dd>
      </dl>
      {p.problem ? (
        <p className="mt-2 text-sm text-destructive [overflow-wrap:anywhere]">
          Its model list could not be read: {p.problem}
        </p>
      ) : null}
      {canAdminister && p.source === "console" && p.id ? (
        <div className="mt-3 flex items-center gap-3">
          <Button
            variant="outline"
            size="sm"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Remove the provider ${p.name}? Calls stop using its models.`))
                remove.mutate({ id: p.id! });
            }}
          >
            Remove
          </Button>
          {remove.error ? (
            <span role="alert" className="text-xs text-destructive">
              {problemOf(remove.error).detail}
            </span>
          ) : null}
        </div>
      ) : null}
    </Card>
  );
}

const MODEL_COLUMNS: ColumnDef<Model, unknown>[] = [
  {
    header: "Model",
    cell: ({ row }) => (
      <div className="min-w-40">
        <div className="font-medium">{row.original.display_name}</div>
        <Mono className="text-muted-foreground">
          {row.original.provider}/{row.original.model_id}
        </Mono>
      </div>
    ),
  },
  {
    header: "Status",
    cell: ({ row }) => <Badge tone={STATUS_TONE[row.original.status]}>{row.original.status}</Badge>,
  },
  { header: "Context", cell: ({ row }) => <span className="tabular-nums">{tokens(row.original.context_length)}</span> },
  {
    header: "Input / 1M",
    cell: ({ row }) => <span className="tabular-nums">{usd(row.original.cost.input_cost_per_million)}</span>,
  },
  {
    header: "Output / 1M",
    cell: ({ row }) => <span className="tabular-nums">{usd(row.original.cost.output_cost_per_million)}</span>,
  },
  {
    header: "Latency",
    cell: ({ row }) =>
      row.original.performance.avg_latency_ms === 0 ? (
        <span className="text-muted-foreground">no calls yet</span>
      ) : (
        <span className="tabular-nums">{Math.round(row.original.performance.avg_latency_ms)} ms</span>
      ),
  },
  {
    header: "Success",
    // Before any call the rate is 1 by definition ("1 before any"): a figure nobody measured reads as "—".
    cell: ({ row }) =>
      row.original.performance.avg_latency_ms === 0 ? (
        <span className="text-muted-foreground">—</span>
      ) : (
        <span className="tabular-nums">{percent(row.original.performance.success_rate)}</span>
      ),
  },
];

const PRICE = /^\d{1,6}(\.\d{1,9})?$/;
/** A price typed as text: blank, or USD per million tokens (the example is the error's). */
const priceText = (example: string) =>
  z.string().trim().regex(PRICE, `A price in USD per million tokens, e.g. ${example}`).or(z.literal(""));
const AddProviderForm = z.object({
  name: z
    .string()
    .trim()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "Lower case letters, digits, '.', '_' or '-'"),
  kind: ProviderKind,
  base_url: z.string().trim().max(2000),
  api_key: z.string().max(4000),
  models: z.string().max(20_000),
  input_cost_per_million: priceText("0.15"),
  output_cost_per_million: priceText("0.6"),
});

// The two prices, one field each: their labels and the example a placeholder shows.
const PRICE_FIELDS = [
  { name: "input_cost_per_million", id: "prov-input-price", label: "Input price", example: "0.15" },
  { name: "output_cost_per_million", id: "prov-output-price", label: "Output price", example: "0.6" },
] as const;

const KIND_LABELS: Record<z.infer<typeof ProviderKind>, string> = {
  "openai-compatible": "OpenAI-compatible (OpenAI, Ollama, vLLM, LM Studio, OpenRouter…)",
  anthropic: "Anthropic",
};

/** "llama3.1:8b" or "llama3.1:8b = 0.1 / 0.4" (its own prices, USD per million input / output tokens). */
function parseModelEntry(entry: string, input: string, output: string) {
  const own = /^(.+?)\s*=\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)$/.exec(entry);
  const [model_id, i, o] = own ? [own[1]!, own[2]!, own[3]!] : [entry, input, output];
  return {
    model_id,
    ...(i !== "" ? { input_cost_per_million: Number(i) } : {}),
    ...(o !== "" ? { output_cost_per_million: Number(o) } : {}),
  };
}

function AddProviderDialog({ open, onOpenChange }: { open: boolean; onOpenChange(o: boolean): void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const form = useForm<z.infer<typeof AddProviderForm>>({
    resolver: zodResolver(AddProviderForm),
    defaultValues: {
      name: "",
      kind: "openai-compatible",
      base_url: "",
      api_key: "",
      models: "",
      input_cost_per_million: "",
      output_cost_per_million: "",
    },
  });
  const add = useMutation(
    trpc.reasoning.providers.add.mutationOptions({
      onSuccess: () => {
        form.reset();
        onOpenChange(false);
        void queryClient.invalidateQueries({ queryKey: trpc.reasoning.providers.list.pathKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.reasoning.models.pathKey() });
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const kind = form.watch("kind");
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Add a model provider"
      description="Its models join your organization's catalogue; the API key is stored for calls and never shown again."
    >
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit((v) => {
          const models = v.models
            .split(/[\n,]/)
            .map((m) => m.trim())
            .filter(Boolean);
          if (!models.length && (v.input_cost_per_million || v.output_cost_per_million)) {
            // A price belongs to a model: without a list, the provider's own (unpriced) list is read.
            form.setError("models", { message: "List the models these prices apply to." });
            return;
          }
          add.mutate({
            name: v.name,
            kind: v.kind,
            ...(v.base_url ? { base_url: v.base_url } : {}),
            ...(v.api_key ? { api_key: v.api_key } : {}),
            ...(models.length
              ? {
                  models: models.map((m) => parseModelEntry(m, v.input_cost_per_million, v.output_cost_per_million)),
                }
              : {}),
          });
        })}
      >
        <FormField id="prov-name" label="Name" error={errors.name?.message}>
          {(control) => <Input {...control} placeholder="ollama" {...form.register("name")} />}
        </FormField>
        <FormField id="prov-kind" label="Kind">
          {(control) => (
            <NativeSelect {...control} {...form.register("kind")}>
              {ProviderKind.options.map((k) => (
                <option key={k} value={k}>
                  {KIND_LABELS[k]}
                </option>
              ))}
            </NativeSelect>
          )}
        </FormField>
        <FormField
          id="prov-url"
          label={`Base URL${kind === "anthropic" ? " (optional)" : ""}`}
          error={errors.base_url?.message}
        >
          {(control) => (
            <Input
              {...control}
              type="url"
              inputMode="url"
              placeholder={kind === "anthropic" ? "https://api.anthropic.com/v1" : "http://localhost:11434/v1"}
              {...form.register("base_url")}
            />
          )}
        </FormField>
        <FormField id="prov-key" label="API key (optional)" error={errors.api_key?.message}>
          {(control) => <Input {...control} type="password" autoComplete="off" {...form.register("api_key")} />}
        </FormField>
        <FormField
          id="prov-models"
          label="Models (optional)"
          description={
            <>
              Comma-separated model ids, each optionally with its own prices as <code>model = input / output</code>.
              Empty: the provider&apos;s own list is read (unpriced).
            </>
          }
          error={errors.models?.message}
        >
          {(control) => <Input {...control} placeholder="llama3.1:8b, qwen2.5:7b" {...form.register("models")} />}
        </FormField>
        <div className="grid grid-cols-2 gap-3">
          {PRICE_FIELDS.map((f) => (
            <FormField
              key={f.name}
              id={f.id}
              label={`${f.label} (USD per million tokens)`}
              error={errors[f.name]?.message}
            >
              {(control) => (
                <Input {...control} inputMode="decimal" placeholder={f.example} {...form.register(f.name)} />
              )}
            </FormField>
          ))}
          <p className="col-span-2 text-xs text-muted-foreground">
            For the listed models without prices of their own. A model without a price (and not in the price table)
            cannot be used by a key with a budget, and its spend counts as $0.
          </p>
        </div>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={add.isPending}>
            {add.isPending ? "Adding…" : "Add provider"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
