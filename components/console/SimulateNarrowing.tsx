"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation } from "@tanstack/react-query";
import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { Controller, useForm } from "react-hook-form";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { DataTable } from "@/components/ui/data-table";
import { FieldError } from "@/components/ui/primitives";
import { SimulatedRefusal } from "@/server/identity/schemas";
import { ago } from "./format";
import { applyProblem, useTRPC } from "./Providers";

// The picked capabilities are the grant's own, offered by the server; the browser has no capability
// catalogue (the root fills it on the server, and it refuses every name until then), so the
// request schema's catalogue check runs on the server, which answers a refusal as a problem.
const SimulateForm = z.object({ capabilities: z.array(z.string()).max(100) });
type SimulateForm = z.infer<typeof SimulateForm>;

const EXAMPLE_COLUMNS: ColumnDef<z.infer<typeof SimulatedRefusal>, unknown>[] = [
  {
    header: "When",
    cell: ({ row }) => (
      <span className="whitespace-nowrap text-xs" title={row.original.timestamp}>
        {ago(row.original.timestamp)}
      </span>
    ),
  },
  {
    header: "Operation",
    cell: ({ row }) => <span className="font-mono text-xs [overflow-wrap:anywhere]">{row.original.operation}</span>,
  },
  {
    header: "Capability",
    cell: ({ row }) => <span className="font-mono text-xs [overflow-wrap:anywhere]">{row.original.capability}</span>,
  },
  {
    header: "Record",
    cell: ({ row }) => (
      <Link
        className="font-mono text-xs text-primary underline underline-offset-2 [overflow-wrap:anywhere]"
        href={`/provenance?record=${encodeURIComponent(row.original.provenance_id)}`}
      >
        {row.original.provenance_id}
      </Link>
    ),
  },
];

/**
 * "What if it held only these?": the capabilities to keep (the used ones to begin with), the
 * delegation's calls in the window replayed against them by the server with the gate's matcher,
 * and the calls that would have been refused, each linked to its provenance record. It changes
 * nothing: narrowing itself is a learning proposal, decided in the approval inbox.
 */
export function SimulateNarrowing({
  delegationId,
  since,
  held,
  used,
}: {
  delegationId: string;
  since: string;
  /** What the grant holds (the usage's granted rows), offered to keep. */
  held: string[];
  /** What was used in the window: kept by default. */
  used: string[];
}) {
  const trpc = useTRPC();
  const form = useForm<SimulateForm>({
    resolver: zodResolver(SimulateForm),
    defaultValues: { capabilities: used },
  });
  const simulate = useMutation(
    trpc.identity.delegations.simulate.mutationOptions({ onError: (e) => applyProblem(form, e) }),
  );
  const result = simulate.data;
  const errors = form.formState.errors;
  return (
    <div className="space-y-4">
      <form
        noValidate
        className="space-y-3"
        aria-labelledby="simulate-title"
        onSubmit={form.handleSubmit((v) => simulate.mutate({ id: delegationId, capabilities: v.capabilities, since }))}
      >
        <Controller
          control={form.control}
          name="capabilities"
          render={({ field }) => (
            <fieldset className="space-y-2">
              <legend className="text-sm font-medium">Keep</legend>
              <div className="grid grid-cols-1 gap-x-4 gap-y-1 rounded-md border border-border p-3 sm:grid-cols-2">
                {held.map((c) => (
                  <label key={c} className="flex min-w-0 items-center gap-2 text-xs">
                    <input
                      type="checkbox"
                      checked={field.value.includes(c)}
                      onChange={(e) =>
                        field.onChange(
                          e.target.checked ? [...field.value, c] : field.value.filter((kept) => kept !== c),
                        )
                      }
                    />
                    <span className="font-mono [overflow-wrap:anywhere]">{c}</span>
                    {used.includes(c) ? null : <span className="text-muted-foreground">(unused)</span>}
                  </label>
                ))}
              </div>
              <FieldError message={errors.capabilities?.message} />
            </fieldset>
          )}
        />
        <FieldError message={errors.root?.message} />
        <div className="flex flex-wrap gap-2">
          <Button type="submit" disabled={simulate.isPending}>
            {simulate.isPending ? "Simulating…" : "Simulate"}
          </Button>
          <Button type="button" variant="outline" onClick={() => form.setValue("capabilities", used)}>
            Keep the used ones
          </Button>
        </div>
      </form>
      {result ? (
        <div className="space-y-3" data-testid="simulation">
          <dl className="grid grid-cols-2 gap-3 sm:max-w-md">
            <div className="rounded-md border border-border p-3">
              <dt className="text-xs text-muted-foreground">Would refuse</dt>
              <dd className="text-2xl font-semibold tabular-nums" data-testid="would-refuse">
                {result.would_refuse}
              </dd>
            </div>
            <div className="rounded-md border border-border p-3">
              <dt className="text-xs text-muted-foreground">Would allow</dt>
              <dd className="text-2xl font-semibold tabular-nums" data-testid="would-allow">
                {result.would_allow}
              </dd>
            </div>
          </dl>
          {result.examples.length > 0 ? (
            <DataTable
              caption="Calls the narrower grant would refuse"
              columns={EXAMPLE_COLUMNS}
              data={result.examples}
              empty={null}
            />
          ) : (
            <p className="text-sm text-muted-foreground">No call in the window would have been refused.</p>
          )}
          {result.would_refuse > result.examples.length ? (
            <p className="text-xs text-muted-foreground">
              The {result.examples.length} newest of {result.would_refuse} shown.
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
