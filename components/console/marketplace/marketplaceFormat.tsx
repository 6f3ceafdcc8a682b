import { Star } from "lucide-react";
import { Badge } from "@/components/ui/primitives";
import { cn } from "@/components/ui/cn";

/** Small renderers shared by the marketplace's console pages. */

/**
 * A rating as five stars, filled to the tenth (4.3 fills four and a third): drawn for the eye,
 * while screen readers get the figure once, from the label.
 */
export function Stars({ value, count, size = 14 }: { value: number | null; count?: number; size?: number }) {
  const label =
    value === null ? "Not rated yet" : `Rated ${value.toFixed(1)} out of 5${count !== undefined ? ` by ${count}` : ""}`;
  return (
    <span className="inline-flex items-center gap-1" role="img" aria-label={label}>
      <span aria-hidden className="inline-flex">
        {[0, 1, 2, 3, 4].map((i) => {
          const fill = value === null ? 0 : Math.max(0, Math.min(1, value - i));
          return (
            <span key={i} className="relative inline-block" style={{ width: size, height: size }}>
              <Star className="absolute inset-0 text-muted-foreground/40" style={{ width: size, height: size }} />
              <span className="absolute inset-0 overflow-hidden" style={{ width: `${fill * 100}%` }}>
                <Star className="fill-warning text-warning" style={{ width: size, height: size }} />
              </span>
            </span>
          );
        })}
      </span>
      <span aria-hidden className="text-xs tabular-nums text-muted-foreground">
        {value === null ? "no ratings" : `${value.toFixed(1)}${count !== undefined ? ` (${count})` : ""}`}
      </span>
    </span>
  );
}

const HEALTH_TONES = { healthy: "success", degraded: "warning", down: "danger", unknown: "neutral" } as const;

/** The worker's last health verdict on a connector or an installation. */
export function HealthStatus({ status }: { status: keyof typeof HEALTH_TONES }) {
  return (
    <Badge tone={HEALTH_TONES[status]}>
      <span aria-hidden className="mr-1 inline-block h-1.5 w-1.5 rounded-full bg-current" />
      {status}
    </Badge>
  );
}

/**
 * A connector's icon: the catalogue's image, or its initial on a tinted square when the icon
 * fails to load (a self-hosted install without internet access still reads well).
 */
export function ConnectorIcon({ name, src, size = 40 }: { name: string; src: string | null; size?: number }) {
  return (
    <span
      className="relative inline-flex shrink-0 items-center justify-center overflow-hidden rounded-lg border border-border bg-muted text-base font-semibold text-muted-foreground"
      style={{ width: size, height: size }}
    >
      <span aria-hidden>{name.slice(0, 1).toUpperCase()}</span>
      {src ? (
        <img
          src={src}
          alt=""
          width={size}
          height={size}
          className={cn("absolute inset-0 h-full w-full bg-card object-contain p-1")}
          onError={(e) => (e.currentTarget.style.display = "none")}
        />
      ) : null}
    </span>
  );
}

/** A count as the store shows it: 1.2k installs. */
export function compactCount(n: number): string {
  return new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

/** Dollars with the precision small per-call costs need. */
export function usd(n: number): string {
  return n === 0 ? "$0" : n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}
