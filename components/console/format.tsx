import { Badge } from "@/components/ui/primitives";

export { Did } from "./Did";

/** Small shared renderers for the console's tables. */
export function ago(iso: string): string {
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 0) {
    const f = -s;
    return f < 3600
      ? `in ${Math.round(f / 60)} min`
      : f < 86400
        ? `in ${Math.round(f / 3600)} h`
        : `in ${Math.round(f / 86400)} d`;
  }
  return s < 60
    ? `${s}s ago`
    : s < 3600
      ? `${Math.round(s / 60)} min ago`
      : s < 86400
        ? `${Math.round(s / 3600)} h ago`
        : `${Math.round(s / 86400)} d ago`;
}

export function StatusBadge({ status }: { status: string }) {
  const tone =
    status === "active" || status === "allowed"
      ? "success"
      : status === "revoked" || status === "denied"
        ? "danger"
        : status === "expired"
          ? "warning"
          : "neutral";
  return <Badge tone={tone}>{status}</Badge>;
}
