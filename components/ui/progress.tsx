import { cn } from "./cn";

/**
 * A progress bar (role="progressbar"): the width follows `value` with a short transition, so a
 * bar polled every half second moves rather than jumps (and jumps for who asks for reduced motion).
 */
export function Progress({
  value,
  label,
  tone = "primary",
  className,
}: {
  value: number;
  label: string;
  tone?: "primary" | "success" | "danger" | "neutral";
  className?: string;
}) {
  const v = Math.max(0, Math.min(100, Math.round(value)));
  const bar = {
    primary: "bg-primary",
    success: "bg-success",
    danger: "bg-destructive",
    neutral: "bg-muted-foreground",
  }[tone];
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={v}
      className={cn("h-2 w-full overflow-hidden rounded-full bg-muted", className)}
    >
      <div
        className={cn(
          "h-full rounded-full motion-safe:transition-[width] motion-safe:duration-300 motion-safe:ease-out",
          bar,
        )}
        style={{ width: `${v}%` }}
      />
    </div>
  );
}
