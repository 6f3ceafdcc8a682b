"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { Plus } from "lucide-react";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, FieldError, Input, NativeSelect } from "@/components/ui/primitives";
import { AutonomyProfile, DeploymentMode } from "@/server/controlPlane/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { ago, Did } from "./format";
import { applyProblem, problemOf, useTRPC } from "./Providers";

type Org = inferRouterOutputs<AppRouter>["controlPlane"]["orgs"]["list"]["data"][number];

const CreateOrgForm = z.object({
  org_did: z.string().min(8, "Pick the organization's passport"),
  name: z.string().trim().min(1, "Name the organization").max(200),
  deployment_mode: DeploymentMode,
  autonomy_profile: z.enum(["", ...AutonomyProfile.options]),
});

const DEPLOYMENT_LABELS: Record<z.infer<typeof DeploymentMode>, string> = {
  cloud: "Cloud",
  self_hosted: "Self-hosted",
  hybrid: "Hybrid",
};

/** Organizations: this one and the tenants it created (POST /v1/cp/orgs). */
export function Organizations() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const canAdminister = useCanAdminister();
  const list = useInfiniteQuery(
    trpc.controlPlane.orgs.list.infiniteQueryOptions(
      { limit: 20 },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const columns: ColumnDef<Org, unknown>[] = [
    { header: "Name", cell: ({ row }) => <span className="font-medium">{row.original.name}</span> },
    { header: "Slug", cell: ({ row }) => <span className="font-mono text-xs">{row.original.slug}</span> },
    { header: "DID", cell: ({ row }) => <Did value={row.original.org_did} /> },
    { header: "Deployment", cell: ({ row }) => <Badge>{row.original.deployment_mode}</Badge> },
    {
      header: "Autonomy",
      cell: ({ row }) => row.original.autonomy_profile ?? <span className="text-muted-foreground">—</span>,
    },
    {
      header: "Created",
      cell: ({ row }) => <span className="text-xs text-muted-foreground">{ago(row.original.created_at)}</span>,
    },
  ];
  return (
    <>
      <PageHeader
        title="Organizations"
        description="Your organization and the tenants it created. A tenant is backed by an organization passport."
        actions={
          canAdminister ? (
            <Button onClick={() => setOpen(true)}>
              <Plus className="h-4 w-4" aria-hidden /> Create organization
            </Button>
          ) : undefined
        }
      />
      <DataTable
        caption="Organizations"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No organizations."
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
      />
      {canAdminister ? (
        <CreateOrgDialog
          open={open}
          onOpenChange={setOpen}
          onDone={() => void queryClient.invalidateQueries({ queryKey: trpc.controlPlane.orgs.list.pathKey() })}
        />
      ) : null}
    </>
  );
}

function CreateOrgDialog({
  open,
  onOpenChange,
  onDone,
}: {
  open: boolean;
  onOpenChange(o: boolean): void;
  onDone(): void;
}) {
  const trpc = useTRPC();
  const passports = useQuery(
    trpc.identity.passports.list.queryOptions({ limit: 100, type: "organization" }, { enabled: open }),
  );
  const form = useForm<z.infer<typeof CreateOrgForm>>({
    resolver: zodResolver(CreateOrgForm),
    defaultValues: { org_did: "", name: "", deployment_mode: "cloud", autonomy_profile: "" },
  });
  const create = useMutation(
    trpc.controlPlane.orgs.create.mutationOptions({
      onSuccess: (org) => {
        toast.success(`Organization ${org.name} created`);
        form.reset();
        onOpenChange(false);
        onDone();
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const options = passports.data?.data ?? [];
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Create an organization"
      description="Register its organization passport first (Passports → Register passport, type Organization)."
    >
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit((v) =>
          create.mutate({
            org_did: v.org_did,
            name: v.name,
            deployment_mode: v.deployment_mode,
            ...(v.autonomy_profile ? { autonomy_profile: v.autonomy_profile } : {}),
          }),
        )}
      >
        <FormField id="o-passport" label="Organization passport" error={errors.org_did?.message}>
          {(control) => (
            <NativeSelect {...control} {...form.register("org_did")}>
              <option value="">{options.length ? "Choose…" : "No organization passports yet"}</option>
              {options.map((p) => (
                <option key={p.did} value={p.did}>
                  {p.name} ({p.did.slice(0, 20)}…)
                </option>
              ))}
            </NativeSelect>
          )}
        </FormField>
        <FormField id="o-name" label="Name" error={errors.name?.message}>
          {(control) => <Input {...control} {...form.register("name")} />}
        </FormField>
        <div className="grid grid-cols-2 gap-3">
          <FormField id="o-mode" label="Deployment">
            {(control) => (
              <NativeSelect {...control} {...form.register("deployment_mode")}>
                {DeploymentMode.options.map((m) => (
                  <option key={m} value={m}>
                    {DEPLOYMENT_LABELS[m]}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          <FormField id="o-autonomy" label="Autonomy profile">
            {(control) => (
              <NativeSelect {...control} {...form.register("autonomy_profile")}>
                <option value="">Not set</option>
                {AutonomyProfile.options.map((a) => (
                  <option key={a} value={a}>
                    {a[0]!.toUpperCase() + a.slice(1)}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
        </div>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
