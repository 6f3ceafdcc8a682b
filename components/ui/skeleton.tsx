import type { HTMLAttributes } from "react";
import { cn } from "./cn";

/** A placeholder with the shape of what is loading, instead of "—". */
export function Skeleton({ className, ...props }: HTMLAttributes<HTMLDivElement>) {
  return <div aria-hidden className={cn("rounded-md bg-muted motion-safe:animate-pulse", className)} {...props} />;
}
