"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import type { inferRouterOutputs } from "@trpc/server";
import { Plus } from "lucide-react";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { Dialog } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, FieldError, Input, Label, NativeSelect } from "@/components/ui/primitives";
import { RegisterablePassportType } from "@/server/identity/schemas";
import type { AppRouter } from "@/server/appRouter";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { ago, Did } from "./format";
import { applyProblem, problemOf, useTRPC } from "./Providers";

type Passport = inferRouterOutputs<AppRouter>["identity"]["passports"]["list"]["data"][number];

const RegisterForm = z.object({
  type: RegisterablePassportType,
  name: z.string().trim().min(1, "Name the passport").max(200),
  public_key: z.string().trim().min(10, "Paste a did:key or a public JWK"),
  description: z.string().max(2000).optional(),
});

/** Passports: agents and organizations register from a public key; people from their passkey. */
export function Passports() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [tiers, setTiers] = useState<Passport | null>(null);
  const canAdminister = useCanAdminister();
  // `?did=` (a requester or approver linked from the approval inbox) shows that passport first.
  const shown = useSearchParams().get("did");
  const list = useInfiniteQuery(
    trpc.identity.passports.list.infiniteQueryOptions(
      { limit: 20 },
      { getNextPageParam: (last) => last.pagination.next_cursor ?? undefined },
    ),
  );
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.identity.passports.list.pathKey() });
  const columns: ColumnDef<Passport, unknown>[] = [
    { header: "Name", cell: ({ row }) => <span className="font-medium">{row.original.name}</span> },
    {
      header: "Type",
      cell: ({ row }) => (
        <Badge tone={row.original.type === "human" ? "primary" : "neutral"}>{row.original.type}</Badge>
      ),
    },
    { header: "DID", cell: ({ row }) => <Did value={row.original.did} /> },
    {
      header: "Tiers (verification / identity)",
      cell: ({ row }) => (
        <span className="tabular-nums">
          {row.original.verification_tier} / {row.original.identity_tier}
        </span>
      ),
    },
    {
      header: "Registered",
      cell: ({ row }) => <span className="text-xs text-muted-foreground">{ago(row.original.created_at)}</span>,
    },
  ];
  return (
    <>
      <PageHeader
        title="Passports"
        description="Every actor's identity: the did:key of a public key whose private half the service never sees."
        actions={
          canAdminister ? (
            <Button onClick={() => setOpen(true)}>
              <Plus className="h-4 w-4" aria-hidden /> Register passport
            </Button>
          ) : undefined
        }
      />
      {shown ? <PassportCard did={shown} /> : null}
      <DataTable
        caption="Passports"
        columns={columns}
        data={rows}
        loading={list.isFetching}
        error={list.error ? problemOf(list.error).detail : null}
        empty="No passports yet. Register an agent from its public key."
        hasMore={list.hasNextPage}
        onMore={() => void list.fetchNextPage()}
        onRowClick={setTiers}
      />
      {canAdminister ? <RegisterDialog open={open} onOpenChange={setOpen} onDone={() => void invalidate()} /> : null}
      {tiers ? <TiersDialog passport={tiers} onClose={() => setTiers(null)} onDone={() => void invalidate()} /> : null}
    </>
  );
}

function RegisterDialog({
  open,
  onOpenChange,
  onDone,
}: {
  open: boolean;
  onOpenChange(o: boolean): void;
  onDone(): void;
}) {
  const trpc = useTRPC();
  const form = useForm<z.infer<typeof RegisterForm>>({
    resolver: zodResolver(RegisterForm),
    defaultValues: { type: "agent", name: "", public_key: "" },
  });
  const register = useMutation(
    trpc.identity.passports.register.mutationOptions({
      onSuccess: (p) => {
        toast.success(`Passport ${p.name} registered`);
        form.reset();
        onOpenChange(false);
        onDone();
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title="Register a passport"
      description="From a public key only: an Ed25519 or P-256 JWK, or a did:key."
    >
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit((v) => {
          let public_key: string | Record<string, unknown> = v.public_key;
          if (v.public_key.startsWith("{")) {
            try {
              public_key = JSON.parse(v.public_key) as Record<string, unknown>;
            } catch {
              form.setError("public_key", { message: "That JWK is not valid JSON" });
              return;
            }
          }
          register.mutate({
            type: v.type,
            name: v.name,
            public_key: public_key as never,
            description: v.description || undefined,
          });
        })}
      >
        <div className="grid grid-cols-3 gap-3">
          <FormField id="p-type" label="Type">
            {(control) => (
              <NativeSelect {...control} {...form.register("type")}>
                {RegisterablePassportType.options.map((t) => (
                  <option key={t} value={t}>
                    {t[0]!.toUpperCase() + t.slice(1)}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
          <FormField id="p-name" label="Name" className="col-span-2" error={errors.name?.message}>
            {(control) => <Input {...control} {...form.register("name")} />}
          </FormField>
        </div>
        <FormField id="p-key" label="Public key" error={errors.public_key?.message}>
          {(control) => (
            <Input {...control} className="font-mono" placeholder="did:key:z6Mk…" {...form.register("public_key")} />
          )}
        </FormField>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" disabled={register.isPending}>
            {register.isPending ? "Registering…" : "Register"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function TiersDialog({ passport, onClose, onDone }: { passport: Passport; onClose(): void; onDone(): void }) {
  const trpc = useTRPC();
  const [v, setV] = useState(passport.verification_tier);
  const [i, setI] = useState(passport.identity_tier);
  const canAdminister = useCanAdminister();
  const update = useMutation(
    trpc.identity.passports.update.mutationOptions({
      onSuccess: () => {
        toast.success("Tiers updated");
        onDone();
        onClose();
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={passport.name} description={passport.did}>
      <div className="grid grid-cols-2 gap-3">
        {(
          [
            ["Verification tier", v, setV],
            ["Identity tier", i, setI],
          ] as const
        ).map(([label, value, set]) => (
          <div key={label} className="space-y-1.5">
            <Label htmlFor={label}>{label}</Label>
            <NativeSelect
              id={label}
              value={value}
              disabled={!canAdminister}
              onChange={(e) => set(Number(e.target.value))}
            >
              {[0, 1, 2, 3].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </NativeSelect>
          </div>
        ))}
      </div>
      <div className="mt-4 flex justify-end gap-2">
        <Button variant="outline" onClick={onClose}>
          Close
        </Button>
        {canAdminister ? (
          <Button
            onClick={() => update.mutate({ did: passport.did, verification_tier: v, identity_tier: i })}
            disabled={update.isPending}
          >
            Save tiers
          </Button>
        ) : null}
      </div>
    </Dialog>
  );
}

/** One passport, opened by its DID: who it is, its tiers, and what it did (its provenance records). */
function PassportCard({ did }: { did: string }) {
  const trpc = useTRPC();
  const passport = useQuery(trpc.identity.passports.get.queryOptions({ did }));
  const p = passport.data;
  return (
    <Card className="mb-4 min-w-0 space-y-2 p-4" aria-label="Passport" data-testid="passport-card">
      {passport.error ? (
        <p role="alert" className="text-sm text-destructive">
          {problemOf(passport.error).detail}
        </p>
      ) : !p ? (
        <p className="text-sm text-muted-foreground">Loading…</p>
      ) : (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <h2 className="text-base font-semibold">{p.name}</h2>
            <Badge tone={p.type === "human" ? "primary" : "neutral"}>{p.type}</Badge>
          </div>
          <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1 text-sm">
            <dt className="text-muted-foreground">DID</dt>
            <dd className="min-w-0">
              <Did value={p.did} truncate />
            </dd>
            <dt className="text-muted-foreground">Tiers</dt>
            <dd className="tabular-nums">
              verification {p.verification_tier} / identity {p.identity_tier}
            </dd>
            <dt className="text-muted-foreground">Registered</dt>
            <dd>{ago(p.created_at)}</dd>
          </dl>
          <Link
            className="text-sm text-primary underline underline-offset-2"
            href={`/provenance?actor=${encodeURIComponent(p.did)}`}
          >
            What this passport did (provenance)
          </Link>
        </>
      )}
    </Card>
  );
}
