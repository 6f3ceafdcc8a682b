"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import { Copy, Plus } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Confirm, Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, FieldError, Input, Label, Mono, NativeSelect } from "@/components/ui/primitives";
import { decidingCapabilities, type CapabilityGroup } from "@/server/identity/capabilityCatalogue";
import type { AppRouter } from "@/server/appRouter";
import type { inferRouterOutputs } from "@trpc/server";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { ago, Did, StatusBadge } from "./format";
import { confirmWithPasskey } from "./passkeyClient";
import { applyProblem, problemOf, useTRPC } from "./Providers";

type Delegation = inferRouterOutputs<AppRouter>["identity"]["delegations"]["list"]["data"][number];

const CreateKeyForm = z.object({
  name: z.string().trim().min(1, "Name the key so you can recognise it later").max(200),
  capabilities: z.array(z.string()).min(1, "Pick at least one capability"),
  days: z.number({ message: "Enter a number of days" }).int().min(1, "At least 1 day").max(3650, "At most 3650 days"),
});

type DelegationKind = Delegation["kind"];

/** The kinds the list can show; run delegations and trigger authorities are the agents' own. */
const KIND_FILTERS: ["" | DelegationKind, string][] = [
  ["api_key", "API keys"],
  ["execution", "Run delegations"],
  ["trigger", "Trigger authorities"],
  ["session", "Console sessions"],
  ["member", "Member grants"],
  ["delegation_token", "Delegation tokens"],
  ["", "All kinds"],
];

/** `capabilityGroups`: what the picker offers, grouped by area (families first), as the page reads it from the composition root. */
export function Keys({ capabilityGroups }: { capabilityGroups: CapabilityGroup[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<"" | "active" | "revoked" | "expired">("");
  // API keys first: run delegations (one per agent run, ended with it) would bury them.
  const [kind, setKind] = useState<"" | DelegationKind>("api_key");
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ token: string; name: string } | null>(null);
  const router = useRouter();
  const canAdminister = useCanAdminister();
  const list = useInfiniteQuery(
    trpc.identity.delegations.list.infiniteQueryOptions(
      { limit: 20, ...(status ? { status } : {}), ...(kind ? { kind } : {}) },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.identity.delegations.list.pathKey() });
  const revoke = useMutation(
    trpc.identity.delegations.revoke.mutationOptions({
      onSuccess: () => {
        toast.success("Delegation revoked, with everything derived from it");
        void invalidate();
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const columns: ColumnDef<Delegation, unknown>[] = [
    // What one scans for leads the row: whether it can still act.
    { header: "Status", cell: ({ row }) => <StatusBadge status={row.original.status} /> },
    {
      header: "Name",
      cell: ({ row }) => (
        // A real link (open in a new tab, read by a screen reader as one); the row's click goes there too.
        <Link
          href={`/keys/${row.original.id}`}
          className="block max-w-[12rem] truncate font-medium text-primary underline-offset-2 hover:underline"
          title={row.original.name ?? undefined}
          onClick={(e) => e.stopPropagation()}
        >
          {row.original.name ?? row.original.kind.replace("_", " ")}
        </Link>
      ),
    },
    {
      header: "Kind",
      cell: ({ row }) => <Badge className="whitespace-nowrap">{row.original.kind.replace("_", " ")}</Badge>,
    },
    {
      header: "Holder",
      cell: ({ row }) => (
        <span className="flex max-w-[13rem]">
          <Did value={row.original.delegate_did} truncate />
        </span>
      ),
    },
    {
      header: "Capabilities",
      cell: ({ row }) => (
        <span
          className="line-clamp-2 min-w-40 max-w-[16rem] break-words text-xs"
          title={row.original.capabilities.join(", ")}
        >
          {row.original.capabilities.join(", ")}
        </span>
      ),
    },
    {
      header: "Expires",
      cell: ({ row }) => (
        <span className="whitespace-nowrap text-xs text-muted-foreground">{ago(row.original.expires_at)}</span>
      ),
    },
    {
      header: "",
      id: "actions",
      cell: ({ row }) =>
        canAdminister && row.original.status === "active" ? (
          <span onClick={(e) => e.stopPropagation()}>
            <Confirm
              trigger={
                <Button variant="outline" size="sm" aria-label={`Revoke ${row.original.name ?? row.original.id}`}>
                  Revoke
                </Button>
              }
              title="Revoke this delegation?"
              description="Its token, and every delegation derived from it, is refused from now on, in every process. This cannot be undone."
              confirmLabel="Revoke"
              onConfirm={() => revoke.mutate({ id: row.original.id, reason: "revoked in the console" })}
            />
          </span>
        ) : null,
    },
  ];
  return (
    <>
      <PageHeader
        title="API keys & delegations"
        description="Every credential is a delegation: scoped, time-limited, revocable. Revoking one revokes all that derive from it."
        actions={
          canAdminister ? (
            <Button onClick={() => setCreating(true)}>
              <Plus className="h-4 w-4" aria-hidden /> Create API key
            </Button>
          ) : undefined
        }
      />
      <div className="mb-3 flex flex-wrap items-center gap-2">
        <Label htmlFor="status-filter" className="text-muted-foreground">
          Status
        </Label>
        <NativeSelect
          id="status-filter"
          className="w-40"
          value={status}
          onChange={(e) => setStatus(e.target.value as typeof status)}
        >
          <option value="">All</option>
          <option value="active">Active</option>
          <option value="revoked">Revoked</option>
          <option value="expired">Expired</option>
        </NativeSelect>
        <Label htmlFor="kind-filter" className="text-muted-foreground">
          Kind
        </Label>
        <NativeSelect
          id="kind-filter"
          className="w-48"
          value={kind}
          onChange={(e) => setKind(e.target.value as typeof kind)}
        >
          {KIND_FILTERS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </NativeSelect>
      </div>
      <DataTable
        caption="Delegations"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty={
          canAdminister
            ? "No delegations yet. Create an API key to call the API."
            : "No delegations yet. An administrator creates API keys."
        }
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={(d) => router.push(`/keys/${d.id}`)}
      />
      {canAdminister ? (
        <CreateKeyDialog
          capabilityGroups={capabilityGroups}
          open={creating}
          onOpenChange={setCreating}
          onCreated={(token, name) => {
            setCreating(false);
            setCreated({ token, name });
            void invalidate();
          }}
        />
      ) : null}
      <Dialog
        open={!!created}
        onOpenChange={(o) => !o && setCreated(null)}
        title={`API key "${created?.name ?? ""}" created`}
        description="Copy it now: it is shown once and never stored."
      >
        <div className="rounded-md bg-muted p-3">
          <Mono data-testid="new-token">{created?.token}</Mono>
        </div>
        <div className="mt-4 flex justify-end">
          <Button
            variant="outline"
            onClick={() => {
              void navigator.clipboard?.writeText(created?.token ?? "");
              toast.success("Copied");
            }}
          >
            <Copy className="h-4 w-4" aria-hidden /> Copy
          </Button>
        </div>
      </Dialog>
    </>
  );
}

function CreateKeyDialog({
  capabilityGroups,
  open,
  onOpenChange,
  onCreated,
}: {
  capabilityGroups: CapabilityGroup[];
  open: boolean;
  onOpenChange(o: boolean): void;
  onCreated(token: string, name: string): void;
}) {
  const trpc = useTRPC();
  const form = useForm<z.infer<typeof CreateKeyForm>>({
    resolver: zodResolver(CreateKeyForm),
    defaultValues: { name: "", capabilities: [], days: 90 },
  });
  const create = useMutation(
    trpc.identity.apiKeys.create.mutationOptions({
      onSuccess: (out) => {
        form.reset();
        onCreated(out.token, out.name);
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const chosen = form.watch("capabilities");
  // A key that can decide approvals needs a passkey assertion made in this session (the server
  // refuses it otherwise): the person confirms with their passkey first, which signs them in again.
  const deciding = decidingCapabilities(
    Array.isArray(chosen) ? chosen : [],
    capabilityGroups.flatMap((g) => g.capabilities.filter((c) => c.decides).map((c) => c.capability)),
  );
  const submit = form.handleSubmit(async (v) => {
    if (deciding.length > 0) {
      try {
        await confirmWithPasskey();
      } catch (e) {
        form.setError("root", { message: (e as Error).message });
        return;
      }
    }
    create.mutate(v);
  });
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Create an API key"
      description="A key of your organization, for API clients. It can only hold capabilities you hold."
    >
      <form noValidate className="space-y-4" onSubmit={(e) => void submit(e)}>
        <FormField id="key-name" label="Name" error={errors.name?.message}>
          {(control) => <Input {...control} placeholder="CI deploys" {...form.register("name")} />}
        </FormField>
        <fieldset className="space-y-2">
          <legend className="text-sm font-medium">Capabilities</legend>
          <div className="grid max-h-56 grid-cols-2 gap-x-4 gap-y-1 overflow-auto rounded-md border border-border p-3">
            {capabilityGroups.flatMap(({ title: group, capabilities }) =>
              capabilities.map(({ capability: c }) => (
                <label key={c} className="flex items-center gap-2 text-xs">
                  <input type="checkbox" value={c} {...form.register("capabilities")} />
                  <span className="font-mono">{c}</span>
                  <span className="sr-only">({group})</span>
                </label>
              )),
            )}
          </div>
          <FieldError message={errors.capabilities?.message} />
          {deciding.length > 0 ? (
            <p role="note" data-testid="key-step-up-note" className="text-xs text-muted-foreground">
              <span className="font-mono">{deciding.join(", ")}</span> can decide approvals: creating this key asks for
              your passkey, which signs you in again.
            </p>
          ) : null}
        </fieldset>
        <FormField id="key-days" label="Valid for (days)" error={errors.days?.message}>
          {(control) => (
            <Input {...control} type="number" className="w-32" {...form.register("days", { valueAsNumber: true })} />
          )}
        </FormField>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={create.isPending || form.formState.isSubmitting}>
            {create.isPending ? "Creating…" : deciding.length > 0 ? "Confirm with passkey and create" : "Create key"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
