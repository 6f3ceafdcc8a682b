import type { NodeSDKConfiguration } from "@opentelemetry/sdk-node";

/**
 * No query string leaves in a span. Next.js names its request spans and sets `http.target` from
 * the request's URL (`/setup?token=…`, `/invite?token=…`, `/api/passkeys/invite?token=…`: one-time
 * tokens), and an instrumented fetch sets `http.url`/`url.full`; a trace collector is not a place
 * for credentials. So every span, svc's own and any library's, has the query cut from its name
 * and from each attribute that holds a URL or a path, and `url.query` dropped, before any exporter
 * sees it. All of it, not a list of parameter names: a query can carry anything.
 */
type SpanProcessor = NonNullable<NodeSDKConfiguration["spanProcessors"]>[number];
type SdkSpan = Parameters<SpanProcessor["onStart"]>[0];

/** Attributes holding a URL or a request target, by semantic conventions old and new, and Next.js's. */
const URL_ATTRIBUTES = new Set(["http.target", "http.url", "url.full", "url.path", "next.span_name", "http.route"]);
const DROPPED = ["url.query"];

/** `text` with each URL's or path's query (from `?` to the next whitespace) cut. */
export function stripQueries(text: string): string {
  return text.includes("?") ? text.replace(/\?[^\s]*/g, "") : text;
}

/** A string attribute worth cutting even under a name not listed: a URL or an absolute path with a query. */
const looksLikeUrl = (v: string) => v.includes("?") && /^(\/|[a-z][a-z0-9+.-]*:\/\/)/i.test(v);

/** In free text (an exception's message), only the queries of URLs with a scheme: a `?` of prose stays. */
const stripUrlQueriesIn = (text: string) =>
  text.includes("?") ? text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#]*)\?[^\s#]*/gi, "$1") : text;

function scrubAttributes(attributes: Record<string, unknown>): void {
  for (const key of DROPPED) delete attributes[key];
  for (const [key, value] of Object.entries(attributes))
    if (typeof value === "string")
      attributes[key] = URL_ATTRIBUTES.has(key) || looksLikeUrl(value) ? stripQueries(value) : stripUrlQueriesIn(value);
}

function scrub(span: SdkSpan): void {
  // Mutated in place: in onEnding the span is still open but its attributes are final.
  scrubAttributes(span.attributes as Record<string, unknown>);
  // Events too: a recorded exception's message may quote the URL a fetch failed on.
  for (const event of span.events) if (event.attributes) scrubAttributes(event.attributes as Record<string, unknown>);
  if (span.name.includes("?")) span.updateName(stripQueries(span.name));
}

/**
 * The processor that does it, first in the SDK's list: at a span's start (what it was started
 * with) and as it ends, before it is handed to the exporters' processors (onEnding runs before any
 * processor's onEnd).
 */
export class QueryStripper implements SpanProcessor {
  onStart(span: SdkSpan): void {
    scrub(span);
  }
  onEnding(span: SdkSpan): void {
    scrub(span);
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
