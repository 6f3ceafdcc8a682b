import type { Context } from "@opentelemetry/api";
import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";

type SpanProcessor = NonNullable<NodeSDKConfiguration["spanProcessors"]>[number];
type StartedSpan = Parameters<SpanProcessor["onStart"]>[0];
type EndedSpan = Parameters<SpanProcessor["onEnd"]>[0];

/**
 * Next.js's spans that describe its own module loading, not the request: "load route module"
 * (`LoadComponents.loadRouteModule`) opens on every request, cached module or not, and made 930 of
 * a short run's spans behind a proxy (issue 27) while saying nothing an operator acts on. Matched
 * by `next.span_type`, which Next.js sets when it starts the span (its name can be renamed).
 */
export const DROPPED_NEXT_SPAN_TYPES: ReadonlySet<string> = new Set(["LoadComponents.loadRouteModule"]);

const dropped = (span: { attributes: Record<string, unknown> }) => {
  const type = span.attributes["next.span_type"];
  return typeof type === "string" && DROPPED_NEXT_SPAN_TYPES.has(type);
};

/**
 * Hands the exporting processors every span but those: a processor rather than a sampler, so an
 * operator's OTEL_TRACES_SAMPLER still decides everything else. Those spans are leaves (Next.js
 * requires a module inside them), so no exported span loses its parent.
 */
export class NextInternalSpanFilter implements SpanProcessor {
  constructor(private readonly exporting: SpanProcessor[]) {}

  onStart(span: StartedSpan, parentContext: Context): void {
    if (!dropped(span)) for (const p of this.exporting) p.onStart(span, parentContext);
  }
  onEnding(span: StartedSpan): void {
    if (!dropped(span)) for (const p of this.exporting) p.onEnding?.(span);
  }
  onEnd(span: EndedSpan): void {
    if (!dropped(span)) for (const p of this.exporting) p.onEnd(span);
  }
  async forceFlush(): Promise<void> {
    await Promise.all(this.exporting.map((p) => p.forceFlush()));
  }
  async shutdown(): Promise<void> {
    await Promise.all(this.exporting.map((p) => p.shutdown()));
  }
}
