"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Eye, EyeOff, RefreshCw } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Confirm } from "@/components/ui/dialog";
import { Card, Mono } from "@/components/ui/primitives";
import { problemOf, useTRPC } from "./Providers";

/** The organization's callback signing secret (Standard Webhooks): read only on request, rotated with a day's overlap. */
export function CallbackSecretPanel() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [revealed, setRevealed] = useState(false);
  const secret = useQuery(trpc.executions.callbackSecret.queryOptions({}, { enabled: revealed, staleTime: Infinity }));
  const rotate = useMutation(
    trpc.executions.rotateCallbackSecret.mutationOptions({
      onSuccess: (out) => {
        queryClient.setQueryData(trpc.executions.callbackSecret.queryKey({}), { secret: out.secret });
        setRevealed(true);
        toast.success(
          out.previous_expires_at
            ? `Rotated: the previous secret also signs until ${new Date(out.previous_expires_at).toLocaleString()}`
            : "Rotated",
        );
      },
      onError: (e) => toast.error(problemOf(e).detail),
    }),
  );
  return (
    <Card role="region" className="mt-6 p-4" aria-labelledby="callback-secret-title">
      <h2 id="callback-secret-title" className="text-base font-semibold">
        Callback signing secret
      </h2>
      <p className="mt-1 text-sm text-muted-foreground">
        Callbacks carry webhook-id, webhook-timestamp and webhook-signature headers: verify them with this secret
        (Standard Webhooks).
      </p>
      <div className="mt-3 min-h-9 rounded-md bg-muted px-3 py-2" aria-live="polite">
        {revealed && secret.data ? (
          <Mono data-testid="callback-secret">{secret.data.secret}</Mono>
        ) : revealed && secret.error ? (
          <span role="alert" className="text-sm text-destructive">
            {problemOf(secret.error).detail}
          </span>
        ) : (
          <span className="font-mono text-xs text-muted-foreground">whsec_••••••••••••••••</span>
        )}
      </div>
      <div className="mt-3 flex flex-wrap gap-2">
        <Button variant="outline" size="sm" onClick={() => setRevealed((r) => !r)} aria-pressed={revealed}>
          {revealed ? <EyeOff className="h-4 w-4" aria-hidden /> : <Eye className="h-4 w-4" aria-hidden />}{" "}
          {revealed ? "Hide secret" : "Reveal secret"}
        </Button>
        <Confirm
          trigger={
            <Button variant="outline" size="sm" disabled={rotate.isPending}>
              <RefreshCw className="h-4 w-4" aria-hidden /> Rotate
            </Button>
          }
          title="Rotate the callback secret?"
          description="Callbacks are signed with a new secret from now on; for 24 hours they also carry a signature with the current one, so receivers can switch."
          confirmLabel="Rotate"
          onConfirm={() => rotate.mutate({})}
        />
      </div>
    </Card>
  );
}
