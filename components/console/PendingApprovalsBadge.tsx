"use client";

import { useState } from "react";
import { Badge } from "@/components/ui/primitives";
import { useTRPC } from "./Providers";
import { useLiveView } from "./useLiveView";

/** How many open requests the signed-in person may decide, beside the navigation's Approvals entry, live. */
export function PendingApprovalsBadge() {
  const trpc = useTRPC();
  const [pending, setPending] = useState(0);
  useLiveView(trpc.approvals.pendingCount.subscriptionOptions(undefined, { onData: (d) => setPending(d.pending) }));
  if (pending === 0) return null;
  return (
    <Badge
      tone="danger"
      className="ml-auto"
      aria-label={`${pending} pending approvals`}
      data-testid="nav-pending-approvals"
    >
      {pending > 999 ? "999+" : pending}
    </Badge>
  );
}
