"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useInfiniteQuery, useMutation } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import { Plus } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useSearchParamsWriter } from "./useSearchParamsWriter";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { FieldError, Input, Label, NativeSelect } from "@/components/ui/primitives";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { useAgentNames } from "./Executions";
import { ago, StatusBadge } from "./format";
import { applyProblem, problemOf, useTRPC } from "./Providers";
import {
  HealthBadge,
  KindBadge,
  PatternChips,
  PatternList,
  SecretOnce,
  splitPatterns,
  type Subscription,
} from "./webhookFormat";

const KINDS = ["webhook", "agent_trigger"] as const;
const STATUSES = ["active", "disabled"] as const;

/** Webhooks and agent triggers, the two kinds of subscription to the event bus. */
export function Webhooks() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const canAdminister = useCanAdminister();
  const { nameOf } = useAgentNames();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  // The filters live in the URL, so a filtered view can be shared or reloaded.
  const kindParam = params.get("kind") ?? "";
  const kind = (KINDS as readonly string[]).includes(kindParam) ? (kindParam as (typeof KINDS)[number]) : undefined;
  const statusParam = params.get("status") ?? "";
  const status = (STATUSES as readonly string[]).includes(statusParam)
    ? (statusParam as (typeof STATUSES)[number])
    : undefined;
  const setFilter = (key: "kind" | "status", value: string) =>
    writeParams((next) => (value ? next.set(key, value) : next.delete(key)));
  const list = useInfiniteQuery(
    trpc.webhooks.list.infiniteQueryOptions(
      { limit: 20, ...(kind ? { kind } : {}), ...(status ? { status } : {}) },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<Subscription, unknown>[] = [
    { header: "Kind", cell: ({ row }) => <KindBadge kind={row.original.kind} /> },
    {
      header: "Target",
      cell: ({ row }) =>
        row.original.kind === "webhook" ? (
          <Link
            href={`/webhooks/${row.original.id}`}
            onClick={(e) => e.stopPropagation()}
            className="block max-w-80 font-mono text-xs text-primary underline-offset-2 [overflow-wrap:anywhere] hover:underline"
          >
            {row.original.target_url}
          </Link>
        ) : (
          <span className="text-sm sm:whitespace-nowrap">
            agent trigger →{" "}
            {row.original.agent_id ? (
              <Link
                href={`/executions?agent=${encodeURIComponent(row.original.agent_id)}`}
                onClick={(e) => e.stopPropagation()}
                // Underlined: a link inside a line of text must not be told apart by colour alone.
                className="text-primary underline underline-offset-2"
              >
                {nameOf(row.original.agent_id) ?? row.original.agent_id}
              </Link>
            ) : (
              "—"
            )}
          </span>
        ),
    },
    {
      header: "Event types",
      cell: ({ row }) => (
        <span className="block min-w-40">
          <PatternChips patterns={row.original.event_types} />
        </span>
      ),
    },
    {
      header: "Health",
      cell: ({ row }) =>
        row.original.kind === "webhook" ? (
          <HealthBadge subscription={row.original} />
        ) : (
          <StatusBadge status={row.original.status} />
        ),
    },
    {
      header: "Description",
      cell: ({ row }) => (
        <span className="block min-w-32 text-xs text-muted-foreground">{row.original.description ?? "—"}</span>
      ),
    },
    {
      header: "Created",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs text-muted-foreground" title={row.original.created_at}>
          {ago(row.original.created_at)}
        </span>
      ),
    },
  ];
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Subscriptions to the event bus: webhooks POST matching events to a receiver, signed (Standard Webhooks); agent triggers start an agent."
        actions={
          canAdminister ? (
            <Button onClick={() => setCreating(true)}>
              <Plus className="h-4 w-4" aria-hidden /> Create webhook
            </Button>
          ) : undefined
        }
      />
      <div className="mb-3 grid grid-cols-1 gap-3 sm:grid-cols-[12rem_12rem]">
        <div className="space-y-1">
          <Label htmlFor="f-kind">Kind</Label>
          <NativeSelect id="f-kind" value={kind ?? ""} onChange={(e) => setFilter("kind", e.target.value)}>
            <option value="">Any</option>
            <option value="webhook">Webhooks</option>
            <option value="agent_trigger">Agent triggers</option>
          </NativeSelect>
        </div>
        <div className="space-y-1">
          <Label htmlFor="f-status">Status</Label>
          <NativeSelect id="f-status" value={status ?? ""} onChange={(e) => setFilter("status", e.target.value)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </NativeSelect>
        </div>
      </div>
      <DataTable
        caption="Webhooks and agent triggers"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty={
          kind || status
            ? "Nothing matches these filters."
            : canAdminister
              ? "No webhooks or agent triggers yet. Create a webhook, or deploy an agent whose manifest declares `on`."
              : "No webhooks or agent triggers yet."
        }
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(s) =>
          s.kind === "webhook"
            ? router.push(`/webhooks/${s.id}`)
            : s.agent_id
              ? router.push(`/executions?agent=${encodeURIComponent(s.agent_id)}`)
              : undefined
        }
      />
      {canAdminister ? (
        <CreateWebhookDialog
          open={creating}
          onOpenChange={setCreating}
          onCreated={(id, secret) => {
            setCreating(false);
            setCreated({ id, secret });
            void list.refetch();
          }}
        />
      ) : null}
      <SecretOnce
        secret={created?.secret ?? null}
        title="Webhook created"
        onClose={() => {
          const id = created?.id;
          setCreated(null);
          if (id) router.push(`/webhooks/${id}`);
        }}
      />
    </>
  );
}

const CreateWebhookForm = z.object({
  target_url: z
    .string()
    .trim()
    .min(1, "Enter the receiver's URL")
    .max(2000)
    .refine((u) => /^https?:\/\//i.test(u) && URL.canParse(u), "Enter a full URL, e.g. https://hooks.example.com/svc"),
  event_types: PatternList,
  description: z.string().trim().max(500, "At most 500 characters"),
});

function CreateWebhookDialog({
  open,
  onOpenChange,
  onCreated,
}: {
  open: boolean;
  onOpenChange(o: boolean): void;
  onCreated(id: string, secret: string): void;
}) {
  const trpc = useTRPC();
  const form = useForm<z.infer<typeof CreateWebhookForm>>({
    resolver: zodResolver(CreateWebhookForm),
    defaultValues: { target_url: "", event_types: "", description: "" },
  });
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (out) => {
        form.reset();
        onCreated(out.id, out.secret);
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const typed = splitPatterns(form.watch("event_types") ?? "");
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Create a webhook"
      description="Matching events are POSTed to the receiver, signed with a whsec_ secret shown once."
    >
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit((v) =>
          create.mutate({
            target_url: v.target_url,
            event_types: splitPatterns(v.event_types),
            ...(v.description ? { description: v.description } : {}),
          }),
        )}
      >
        <FormField
          id="wh-url"
          label="Target URL"
          description="https; never a private address (plain http only for hosts the operator allowed)."
          error={errors.target_url?.message}
        >
          {(control) => (
            <Input
              {...control}
              type="url"
              inputMode="url"
              placeholder="https://hooks.example.com/svc"
              {...form.register("target_url")}
            />
          )}
        </FormField>
        <FormField
          id="wh-types"
          label="Event types"
          description="Comma-separated. A trailing .* matches every type under the prefix (invoice.* matches invoice.paid)."
          after={typed.length > 0 ? <PatternChips patterns={typed} /> : null}
          error={errors.event_types?.message}
        >
          {(control) => (
            <Input {...control} placeholder="invoice.paid, execution.*" {...form.register("event_types")} />
          )}
        </FormField>
        <FormField id="wh-desc" label="Description (optional)" error={errors.description?.message}>
          {(control) => <Input {...control} placeholder="Billing system" {...form.register("description")} />}
        </FormField>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create webhook"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
