"use client";

import { Check, Copy } from "lucide-react";
import { useState, type MouseEvent } from "react";
import { toast } from "sonner";
import { cn } from "@/components/ui/cn";

/** DIDs are ~56 characters: the start says the method, the end tells two apart. */
export function shortDid(value: string): string {
  return value.length > 30 ? `${value.slice(0, 16)}…${value.slice(-6)}` : value;
}

/**
 * A DID as the console shows it everywhere: truncated (the whole value in its title), the
 * passport's name beside it when known, and a button that copies the whole value.
 */
export function Did({
  value,
  name,
  truncate,
  className,
}: {
  value: string | null;
  name?: string | null;
  truncate?: boolean;
  className?: string;
}) {
  const [copied, setCopied] = useState(false);
  if (!value) return <span className="text-muted-foreground">—</span>;
  const copy = async (e: MouseEvent) => {
    // Rows open a detail on click: copying is not opening.
    e.stopPropagation();
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      toast.error("This browser refused the clipboard: select the DID in the record instead.");
    }
  };
  return (
    // In a table the cell grows to fit (the table scrolls); in a narrow frame (`truncate`) it is cut with an ellipsis.
    <span
      className={cn(
        "inline-flex items-center gap-1 align-middle",
        truncate ? "min-w-0 max-w-full" : "whitespace-nowrap",
        className,
      )}
    >
      {name ? (
        <span className={cn("text-xs font-medium", truncate && "max-w-[60%] shrink-0 truncate")}>{name}</span>
      ) : null}
      <span className={cn("font-mono text-xs", truncate && "truncate", name && "text-muted-foreground")} title={value}>
        {shortDid(value)}
      </span>
      <button
        type="button"
        onClick={(e) => void copy(e)}
        className="shrink-0 rounded p-1 text-muted-foreground hover:bg-muted hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        aria-label={copied ? "Copied" : `Copy DID${name ? ` of ${name}` : ""}`}
        title="Copy the whole DID"
      >
        {copied ? <Check className="h-3 w-3" aria-hidden /> : <Copy className="h-3 w-3" aria-hidden />}
      </button>
    </span>
  );
}
