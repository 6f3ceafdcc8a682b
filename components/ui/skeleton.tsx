import type { HTMLAttributes } from "react";
import { cn } from "./cn";

/** A placeholder with the shape of what is loading, instead of "—". */
export function Skeleton({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div aria-hidden className={cn("animate-pulse rounded-md bg-muted", className)} {...props} />;
}
