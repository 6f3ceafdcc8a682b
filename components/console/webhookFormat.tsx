import type { inferRouterOutputs } from "@trpc/server";
import { Copy, TriangleAlert } from "lucide-react";
import { toast } from "sonner";
import { z } from "zod";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { Badge, Mono } from "@/components/ui/primitives";
import { isReservedEventType } from "@/server/events/platformEventTypes";
import { isEventPattern } from "@/server/events/schemas";
import type { AppRouter } from "@/server/appRouter";
import { ago } from "./format";

export type Subscription = inferRouterOutputs<AppRouter>["webhooks"]["list"]["data"][number];
export type WebhookDelivery = inferRouterOutputs<AppRouter>["webhooks"]["deliveries"]["data"][number];

/** Patterns as people type them: a comma (or space) separated list. */
export function splitPatterns(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The event types field, checked with the events area's own pattern rule before anything is sent. */
export const PatternList = z
  .string()
  .refine((t) => splitPatterns(t).length > 0, "Enter at least one event type, e.g. invoice.paid or invoice.*")
  .refine((t) => splitPatterns(t).length <= 50, "At most 50 event types")
  .superRefine((t, ctx) => {
    const bad = splitPatterns(t).filter((p) => !isEventPattern(p));
    if (bad.length > 0)
      ctx.addIssue({
        code: "custom",
        message: `Not an event type or prefix: ${bad.join(", ")} (dot notation in lower case, e.g. invoice.paid; a trailing .* matches every type under it)`,
      });
  });

/** The patterns as chips; the invalid ones stand out. */
export function PatternChips({ patterns }: { patterns: string[] }) {
  return (
    <span className="flex flex-wrap gap-1">
      {patterns.map((p) => (
        <Badge
          key={p}
          tone={isEventPattern(p) ? "neutral" : "danger"}
          className="max-w-full font-mono [overflow-wrap:anywhere]"
        >
          {p}
        </Badge>
      ))}
    </span>
  );
}

/**
 * The type a "send test event" emits: the first exact pattern, else `<prefix>.test` under the
 * first `.*` prefix, so the event is one this webhook is subscribed to; never a platform type.
 */
export function testEventType(patterns: string[], reserved: readonly string[]): string | null {
  // Platform types are reserved (only svc raises them): a test event cannot be one.
  const exact = patterns.find((p) => !p.endsWith(".*") && isEventPattern(p) && !isReservedEventType(p, reserved));
  if (exact) return exact;
  const prefix = patterns.find(
    (p) => p.endsWith(".*") && isEventPattern(p) && !isReservedEventType(`${p.slice(0, -2)}.test`, reserved),
  );
  return prefix ? `${prefix.slice(0, -2)}.test` : null;
}

const REASONS: Record<string, string> = {
  gone: "the receiver answered 410 Gone",
  failing: "failing too long",
  delegation_revoked: "its delegation was revoked",
  manual: "disabled by a person",
};

/** Healthy, failing since …, or disabled with its reason. */
export function HealthBadge({ subscription }: { subscription: Pick<Subscription, "status" | "health"> }) {
  const h = subscription.health;
  if (subscription.status === "disabled") {
    const reason = h?.disabled_reason ? (REASONS[h.disabled_reason] ?? h.disabled_reason) : "disabled";
    return <Badge tone="danger">disabled: {reason}</Badge>;
  }
  if (h?.failing_since) {
    return (
      <Badge
        tone="warning"
        title={`${h.consecutive_failures} failed attempts since ${new Date(h.failing_since).toLocaleString()}`}
      >
        failing since {ago(h.failing_since)}
      </Badge>
    );
  }
  if (h?.last_success_at) return <Badge tone="success">healthy</Badge>;
  return <Badge>no deliveries yet</Badge>;
}

export function KindBadge({ kind }: { kind: Subscription["kind"] }) {
  return (
    <Badge tone={kind === "webhook" ? "primary" : "neutral"}>{kind === "webhook" ? "webhook" : "agent trigger"}</Badge>
  );
}

/** A `whsec_` secret, in this answer only: copy it now. */
export function SecretOnce({ secret, title, onClose }: { secret: string | null; title: string; onClose(): void }) {
  return (
    <Dialog
      open={!!secret}
      onOpenChange={(o) => !o && onClose()}
      title={title}
      description="Receivers verify deliveries with this secret (Standard Webhooks)."
    >
      <p
        role="alert"
        className="mb-3 flex items-start gap-2 rounded-md border border-warning/40 bg-warning/10 p-3 text-sm"
      >
        <TriangleAlert className="mt-0.5 h-4 w-4 shrink-0" aria-hidden /> Copy it now: it is shown once and cannot be
        read again. If it is lost, rotate the secret.
      </p>
      <div className="rounded-md bg-muted p-3 [overflow-wrap:anywhere]">
        <Mono data-testid="webhook-secret">{secret}</Mono>
      </div>
      <div className="mt-4 flex justify-end gap-2">
        <Button
          variant="outline"
          onClick={() => {
            void navigator.clipboard?.writeText(secret ?? "").then(
              () => toast.success("Copied"),
              () => toast.error("This browser refused the clipboard: select the secret instead."),
            );
          }}
        >
          <Copy className="h-4 w-4" aria-hidden /> Copy secret
        </Button>
        <Button onClick={onClose}>Done</Button>
      </div>
    </Dialog>
  );
}
