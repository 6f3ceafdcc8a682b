"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useRef } from "react";

/**
 * Changes the page's query string (filters kept in the URL) with `router.replace`. Each change
 * builds on the one before it, even when that one has not rendered yet: two filters changed in a
 * row (status cleared, then an agent picked) both hold. Built from `useSearchParams()` alone, the
 * second change started from the URL as last rendered and put the first filter back.
 */
export function useSearchParamsWriter(): (change: (next: URLSearchParams) => void) => void {
  const router = useRouter();
  const pathname = usePathname();
  const rendered = useSearchParams().toString();
  const renderedRef = useRef(rendered);
  // The queries asked for and not rendered yet, oldest first.
  const issued = useRef<string[]>([]);
  useEffect(() => {
    renderedRef.current = rendered;
    const at = issued.current.indexOf(rendered);
    // One of ours has rendered: the older ones are past. Anything else (back, a link) starts afresh.
    issued.current = at === -1 ? [] : issued.current.slice(at + 1);
  }, [rendered]);
  return useCallback(
    (change) => {
      const next = new URLSearchParams(issued.current.at(-1) ?? renderedRef.current);
      change(next);
      const query = next.toString();
      issued.current.push(query);
      router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
    },
    [router, pathname],
  );
}
