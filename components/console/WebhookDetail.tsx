"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { ChevronDown, ChevronRight, RefreshCw, Send, Trash2 } from "lucide-react";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { toast } from "sonner";
import { z } from "zod";
import { BackLink } from "@/components/ui/back-link";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { FormField } from "@/components/ui/form-field";
import { Badge, Card, FieldError, Input, NativeSelect } from "@/components/ui/primitives";
import type { AppRouter } from "@/server/appRouter";
import { WebhookStatus } from "@/server/webhooks/schemas";
import { PageHeader, useCanAdminister } from "./ConsoleShell";
import { when } from "./executionFormat";
import { applyProblem, problemOf, QueryStatus, useTRPC } from "./Providers";
import { useSearchParamsWriter } from "./useSearchParamsWriter";
import { DeliveryDetail } from "./WebhookDeliveryDetail";
import { LiveIndicator, useLiveView } from "./useLiveView";
import {
  HealthBadge,
  PatternChips,
  PatternList,
  SecretOnce,
  splitPatterns,
  testEventType,
  type WebhookDelivery,
} from "./webhookFormat";

type Webhook = inferRouterOutputs<AppRouter>["webhooks"]["get"];

/** One webhook: its settings and health, its secret's rotation, a test event, and its delivery log with replay. */
/** `reservedEventPatterns`: the platform event catalogue's patterns, as the page reads them from the server. */
export function WebhookDetail({ id, reservedEventPatterns }: { id: string; reservedEventPatterns: readonly string[] }) {
  const trpc = useTRPC();
  const router = useRouter();
  const params = useSearchParams();
  const writeParams = useSearchParamsWriter();
  const queryClient = useQueryClient();
  const canAdminister = useCanAdminister();
  const eventFilter = params.get("event") ?? "";
  const [secret, setSecret] = useState<string | null>(null);
  const logInput = { id, limit: 50, ...(eventFilter ? { event_id: eventFilter } : {}) };
  const deliveries = useQuery(trpc.webhooks.deliveries.queryOptions(logInput));
  const rows: WebhookDelivery[] = deliveries.data?.data ?? [];
  const webhook = useQuery(trpc.webhooks.get.queryOptions({ id }));
  const w = webhook.data;
  // Each attempt (a retry, a test event's, a replay's) and the health it changes arrive on the page's one stream.
  const stream = useLiveView(
    trpc.webhooks.live.subscriptionOptions(logInput, {
      onData: (v) => {
        queryClient.setQueryData(trpc.webhooks.deliveries.queryKey(logInput), v.deliveries);
        queryClient.setQueryData(trpc.webhooks.get.queryKey({ id }), v.webhook);
      },
    }),
  );
  const testType = w ? testEventType(w.event_types, reservedEventPatterns) : null;
  const emit = useMutation(
    trpc.events.emit.mutationOptions({
      onSuccess: (out) => {
        toast.success(
          `Test event sent: ${out.matched_subscriptions} subscription${out.matched_subscriptions === 1 ? "" : "s"} matched`,
        );
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const retry = useMutation(
    trpc.webhooks.retryDelivery.mutationOptions({
      onSuccess: () => {
        toast.success("Replay queued");
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const rotate = useMutation(
    trpc.webhooks.rotateSecret.mutationOptions({
      onSuccess: (out) => {
        setSecret(out.secret);
        toast.success(
          `Rotated: the previous secret also signs until ${new Date(out.previous_expires_at).toLocaleString()}`,
        );
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const remove = useMutation(
    trpc.webhooks.delete.mutationOptions({
      onSuccess: () => {
        toast.success("Webhook deleted");
        void queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.pathKey() });
        router.push("/webhooks");
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  const setEventFilter = (value: string) =>
    writeParams((next) => (value ? next.set("event", value) : next.delete("event")));
  return (
    <>
      <BackLink href="/webhooks">Webhooks</BackLink>
      <PageHeader
        title="Webhook"
        description={id}
        actions={
          canAdminister && w ? (
            <div className="flex flex-wrap gap-2">
              <Button
                variant="outline"
                disabled={!testType || emit.isPending || w.status !== "active"}
                title={
                  w.status !== "active"
                    ? "Re-enable the webhook first"
                    : testType
                      ? `Emits a ${testType} event`
                      : undefined
                }
                onClick={() =>
                  testType &&
                  emit.mutate({ type: testType, payload: { test: true, webhook_id: id }, source: "console" })
                }
              >
                <Send className="h-4 w-4" aria-hidden /> Send test event
              </Button>
              <Confirm
                trigger={
                  <Button variant="outline" disabled={rotate.isPending}>
                    <RefreshCw className="h-4 w-4" aria-hidden /> Rotate secret
                  </Button>
                }
                title="Rotate this webhook's secret?"
                description="Deliveries are signed with a new secret from now on; for 24 hours they also carry a signature with the current one, so the receiver can switch. The new secret is shown once."
                confirmLabel="Rotate"
                onConfirm={() => rotate.mutate({ id })}
              />
              <Confirm
                trigger={
                  // Outlined: the filled destructive button lacks contrast in dark mode (white on light red).
                  <Button variant="outline" className="text-destructive" disabled={remove.isPending}>
                    <Trash2 className="h-4 w-4" aria-hidden /> Delete
                  </Button>
                }
                title="Delete this webhook?"
                description="No more events are delivered to it; queued deliveries are dropped and its delivery log goes with it. This cannot be undone."
                confirmLabel="Delete webhook"
                onConfirm={() => remove.mutate({ id })}
              />
            </div>
          ) : undefined
        }
      />
      <QueryStatus query={webhook} />
      {w ? (
        <div className="space-y-5">
          <Card className="p-4">
            <div className="mb-3 flex flex-wrap items-center gap-2">
              <span data-testid="webhook-health">
                <HealthBadge subscription={w} />
              </span>
            </div>
            <dl className="grid grid-cols-1 gap-x-3 gap-y-1 text-sm sm:grid-cols-[10rem_1fr] sm:gap-y-2">
              <dt className="text-muted-foreground">Target</dt>
              <dd className="min-w-0 font-mono text-xs [overflow-wrap:anywhere]">{w.target_url}</dd>
              <dt className="text-muted-foreground">Event types</dt>
              <dd className="min-w-0">
                <PatternChips patterns={w.event_types} />
              </dd>
              <dt className="text-muted-foreground">Description</dt>
              <dd className="min-w-0 [overflow-wrap:anywhere]">
                {w.description ?? <span className="text-muted-foreground">—</span>}
              </dd>
              <dt className="text-muted-foreground">Last success</dt>
              <dd className="text-xs">{when(w.health?.last_success_at)}</dd>
              <dt className="text-muted-foreground">Last failure</dt>
              <dd className="text-xs">
                {when(w.health?.last_failure_at)}
                {w.health?.consecutive_failures ? (
                  <span className="ml-2 text-muted-foreground">({w.health.consecutive_failures} in a row)</span>
                ) : null}
              </dd>
              <dt className="text-muted-foreground">Created</dt>
              <dd className="text-xs">{when(w.created_at)}</dd>
            </dl>
          </Card>
          {canAdminister ? (
            <SettingsForm key={`${w.event_types.join(",")}|${w.description}|${w.status}`} webhook={w} />
          ) : null}
          <section aria-labelledby="deliveries-title">
            <div className="mb-2 flex flex-wrap items-center justify-between gap-2">
              <h2 id="deliveries-title" className="text-base font-semibold">
                Delivery log
              </h2>
              <LiveIndicator status={stream.status} />
            </div>
            {eventFilter ? (
              <p className="mb-2 text-sm">
                Attempts at event <span className="font-mono text-xs">{eventFilter}</span>{" "}
                <button type="button" className="text-primary underline" onClick={() => setEventFilter("")}>
                  Show all
                </button>
              </p>
            ) : null}
            <DeliveryLog
              rows={rows}
              webhookId={id}
              canReplay={canAdminister && w.status === "active"}
              onReplay={(d) => retry.mutate({ id, delivery_id: d.id })}
              replaying={retry.isPending}
              onEvent={setEventFilter}
            />
            {deliveries.error ? (
              <p role="alert" className="mt-2 text-sm text-destructive">
                {problemOf(deliveries.error).detail}
              </p>
            ) : null}
            {deliveries.isLoading ? <p className="mt-2 text-sm text-muted-foreground">Loading…</p> : null}
          </section>
        </div>
      ) : null}
      <SecretOnce secret={secret} title="New webhook secret" onClose={() => setSecret(null)} />
    </>
  );
}

function DeliveryLog({
  rows,
  webhookId,
  canReplay,
  onReplay,
  replaying,
  onEvent,
}: {
  rows: WebhookDelivery[];
  webhookId: string;
  canReplay: boolean;
  onReplay(d: WebhookDelivery): void;
  replaying: boolean;
  onEvent(eventId: string): void;
}) {
  if (rows.length === 0)
    return (
      <p className="rounded-md border border-border p-4 text-sm text-muted-foreground">
        No delivery attempted yet. Attempts appear here as events matching this webhook are delivered.
      </p>
    );
  return (
    <div
      className="relative overflow-x-auto rounded-md border border-border bg-card"
      role="region"
      aria-label="Delivery attempts"
      tabIndex={0}
    >
      <table className="w-full text-xs" data-testid="delivery-log">
        <caption className="sr-only">Delivery attempts of webhook {webhookId}, newest first</caption>
        <thead className="bg-muted text-left text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Event
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Attempt
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Status
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Result
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Duration
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              When
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Next retry
            </th>
            <th scope="col" className="px-3 py-1.5 font-medium">
              Details
            </th>
            {canReplay ? (
              <th scope="col" className="px-3 py-1.5 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <DeliveryRow
              key={d.id}
              d={d}
              columns={canReplay ? 9 : 8}
              canReplay={canReplay}
              onReplay={onReplay}
              replaying={replaying}
              onEvent={onEvent}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One attempt: a summary row, and the request and response it unfolds into. */
function DeliveryRow({
  d,
  columns,
  canReplay,
  onReplay,
  replaying,
  onEvent,
}: {
  d: WebhookDelivery;
  columns: number;
  canReplay: boolean;
  onReplay(d: WebhookDelivery): void;
  replaying: boolean;
  onEvent(eventId: string): void;
}) {
  const [open, setOpen] = useState(false);
  const detailId = `delivery-${d.id}`;
  return (
    <>
      <tr className="border-t border-border" data-testid="delivery-row">
        <td className="px-3 py-1.5">
          <div className="font-mono">{d.event_type ?? "—"}</div>
          <button
            type="button"
            className="whitespace-nowrap font-mono text-muted-foreground underline-offset-2 hover:text-primary hover:underline"
            title={`Only the attempts at ${d.event_id}`}
            onClick={() => onEvent(d.event_id)}
          >
            {d.event_id.slice(0, 8)}…{d.event_id.slice(-6)}
          </button>
        </td>
        <td className="px-3 py-1.5 tabular-nums">{d.attempt}</td>
        <td className="px-3 py-1.5 tabular-nums">{d.status_code ?? "no answer"}</td>
        <td className="px-3 py-1.5">
          {d.success ? <Badge tone="success">delivered</Badge> : <Badge tone="danger">failed</Badge>}
        </td>
        <td className="whitespace-nowrap px-3 py-1.5 tabular-nums">{d.duration_ms} ms</td>
        <td className="min-w-24 px-3 py-1.5">{when(d.created_at)}</td>
        <td className="min-w-24 px-3 py-1.5">{when(d.next_attempt_at)}</td>
        <td className="px-3 py-1.5">
          <Button
            variant="ghost"
            size="sm"
            aria-expanded={open}
            aria-controls={detailId}
            aria-label={`${open ? "Hide" : "Show"} request and response of attempt ${d.attempt} of event ${d.event_id}`}
            onClick={() => setOpen((o) => !o)}
          >
            {open ? <ChevronDown className="h-4 w-4" aria-hidden /> : <ChevronRight className="h-4 w-4" aria-hidden />}{" "}
            {d.error ? "Error" : "Details"}
          </Button>
        </td>
        {canReplay ? (
          <td className="px-3 py-1.5">
            <Button
              variant="outline"
              size="sm"
              disabled={replaying}
              aria-label={`Replay attempt ${d.attempt} of event ${d.event_id}`}
              onClick={() => onReplay(d)}
            >
              Replay
            </Button>
          </td>
        ) : null}
      </tr>
      {open ? (
        <tr id={detailId} className="bg-muted/30">
          <td colSpan={columns} className="px-3 py-3">
            <DeliveryDetail delivery={d} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

const SettingsFormSchema = z.object({
  event_types: PatternList,
  description: z.string().trim().max(500, "At most 500 characters"),
  status: WebhookStatus,
});

function SettingsForm({ webhook }: { webhook: Webhook }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const form = useForm<z.infer<typeof SettingsFormSchema>>({
    resolver: zodResolver(SettingsFormSchema),
    defaultValues: {
      event_types: webhook.event_types.join(", "),
      description: webhook.description ?? "",
      status: webhook.status,
    },
  });
  const update = useMutation(
    trpc.webhooks.update.mutationOptions({
      onSuccess: (out) => {
        queryClient.setQueryData(trpc.webhooks.get.queryKey({ id: webhook.id }), out);
        void queryClient.invalidateQueries({ queryKey: trpc.webhooks.list.pathKey() });
        toast.success("Webhook saved");
      },
      onError: (e) => applyProblem(form, e),
    }),
  );
  const errors = form.formState.errors;
  const typed = splitPatterns(form.watch("event_types") ?? "");
  return (
    <Card role="region" aria-labelledby="settings-title" className="p-4">
      <h2 id="settings-title" className="mb-3 text-base font-semibold">
        Settings
      </h2>
      <form
        noValidate
        className="space-y-4"
        onSubmit={form.handleSubmit((v) =>
          update.mutate({
            id: webhook.id,
            event_types: splitPatterns(v.event_types),
            description: v.description ? v.description : null,
            status: v.status,
          }),
        )}
      >
        <FormField
          id="set-types"
          label="Event types"
          description="Comma-separated; a trailing .* matches every type under the prefix."
          after={typed.length > 0 ? <PatternChips patterns={typed} /> : null}
          error={errors.event_types?.message}
        >
          {(control) => <Input {...control} {...form.register("event_types")} />}
        </FormField>
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-[1fr_12rem]">
          <FormField id="set-desc" label="Description" error={errors.description?.message}>
            {(control) => <Input {...control} {...form.register("description")} />}
          </FormField>
          <FormField id="set-status" label="Status">
            {(control) => (
              <NativeSelect {...control} {...form.register("status")}>
                {WebhookStatus.options.map((status) => (
                  <option key={status} value={status}>
                    {status}
                  </option>
                ))}
              </NativeSelect>
            )}
          </FormField>
        </div>
        <FieldError message={errors.root?.message} />
        <div className="flex justify-end">
          <Button type="submit" disabled={update.isPending || !form.formState.isDirty}>
            {update.isPending ? "Saving…" : "Save settings"}
          </Button>
        </div>
      </form>
    </Card>
  );
}
