"use client";

import { useSubscription } from "@trpc/tanstack-react-query";
import { Radio } from "lucide-react";
import { useEffect } from "react";
import { SESSION_REPLACED_EVENT } from "./passkeyClient";

/**
 * Follows a live view (server/trpc/live.ts): one server-sent-events stream for the page, opened
 * once (one governed read) and fed by the server's change notifications; `onData` in the options
 * puts each state where the page reads it (usually its queries' cache). Pages poll nothing.
 *
 *   const live = useLiveView(trpc.executions.live.subscriptionOptions({ id }, { onData: apply }));
 */
export const useLiveView: typeof useSubscription = (options) => {
  const subscription = useSubscription(options);
  const { reset } = subscription;
  // The stream was opened under the page's session: one that a passkey confirmation replaced is
  // ended by the server, so the stream is opened again under the new one.
  useEffect(() => {
    window.addEventListener(SESSION_REPLACED_EVENT, reset);
    return () => window.removeEventListener(SESSION_REPLACED_EVENT, reset);
  }, [reset]);
  return subscription;
};

/** Whether the page's stream is connected, for a small indicator beside its title. */
export function LiveIndicator({ status }: { status: "idle" | "connecting" | "pending" | "error" }) {
  const connected = status === "pending";
  return (
    <span
      role="status"
      data-testid="live-status"
      className="inline-flex items-center gap-1 text-xs text-muted-foreground"
    >
      <Radio className={connected ? "h-3.5 w-3.5 text-success" : "h-3.5 w-3.5"} aria-hidden />
      {connected ? "Live" : status === "error" ? "Reconnecting…" : "Connecting…"}
    </span>
  );
}
