"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useRef } from "react";

/**
 * Changes the page's query string (filters kept in the URL) with `router.replace`. Each change
 * builds on the one before it, even when that one has not rendered yet: two filters changed in a
 * row (status cleared, then an agent picked) both hold. Built from `useSearchParams()` alone, the
 * second change started from the URL as last rendered and put the first filter back.
 *
 * `onElsewhere` hears of a query that this writer did not ask for (Back, a link to the page), for a
 * page that keeps its filters in its own state as well and must then take them from the URL.
 */
export function useSearchParamsWriter(
  onElsewhere?: (query: string) => void,
): (change: (next: URLSearchParams) => void) => void {
  const router = useRouter();
  const pathname = usePathname();
  const rendered = useSearchParams().toString();
  const renderedRef = useRef(rendered);
  // The queries asked for and not rendered yet, oldest first.
  const issued = useRef<string[]>([]);
  const onElsewhereRef = useRef(onElsewhere);
  useEffect(() => {
    onElsewhereRef.current = onElsewhere;
  });
  useEffect(() => {
    if (rendered === renderedRef.current) return;
    renderedRef.current = rendered;
    const at = issued.current.indexOf(rendered);
    // One of ours has rendered: the older ones are past. Anything else (back, a link) starts afresh.
    issued.current = at === -1 ? [] : issued.current.slice(at + 1);
    if (at === -1) onElsewhereRef.current?.(rendered);
  }, [rendered]);
  return useCallback(
    (change) => {
      const base = issued.current.at(-1) ?? renderedRef.current;
      const next = new URLSearchParams(base);
      change(next);
      const query = next.toString();
      // Asking for the query already asked for would leave one in `issued` that never renders.
      if (query === base) return;
      issued.current.push(query);
      router.replace(query ? `${pathname}?${query}` : pathname, { scroll: false });
    },
    [router, pathname],
  );
}
