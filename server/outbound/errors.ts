import { DomainError } from "../errors";

/**
 * Why an outbound call did not produce an answer. They are DomainErrors so that a call made on a
 * caller's behalf (a "send test event" button, an OAuth exchange) becomes a problem+json with a
 * machine code, and a background delivery can record `error.code` as it is.
 */
export class OutboundError extends DomainError {
  constructor(
    status: number,
    code: "outbound_refused" | "outbound_timeout" | "outbound_failed",
    title: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(status, code, title, detail);
    this.name = "OutboundError";
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** The guard refused the destination (scheme, credentials, address, redirect) before any byte was sent to it. */
export class OutboundRefused extends OutboundError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(400, "outbound_refused", "Outbound request refused", detail, options);
    this.name = "OutboundRefused";
  }
}

/** No complete answer within the call's time limit (connect, redirects and body together). */
export class OutboundTimeout extends OutboundError {
  constructor(detail: string) {
    super(504, "outbound_timeout", "Outbound request timed out", detail);
    this.name = "OutboundTimeout";
  }
}

/** The destination could not be reached or broke the connection (DNS failure, refused, reset, TLS). */
export class OutboundFailed extends OutboundError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(502, "outbound_failed", "Outbound request failed", detail, options);
    this.name = "OutboundFailed";
  }
}
