"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { ThemeProvider, useTheme } from "next-themes";
import { useState, useSyncExternalStore, type ReactNode } from "react";
import type { FieldValues, Path, UseFormSetError } from "react-hook-form";
import { Toaster } from "sonner";
import type { AppRouter } from "@/server/appRouter";

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

/** The problem detail of a failed call, for inline and toast messages. */
export function problemOf(error: unknown): { detail: string; fields: Record<string, string> } {
  if (error instanceof TRPCClientError) {
    const problem = (
      error.data as { problem?: { detail?: string; errors?: { field: string; message: string }[] } } | undefined
    )?.problem;
    const fields = Object.fromEntries((problem?.errors ?? []).map((e) => [e.field, e.message]));
    return { detail: problem?.detail ?? error.message, fields };
  }
  return { detail: error instanceof Error ? error.message : String(error), fields: {} };
}

/**
 * Shows a failed call's field errors beside their fields and its detail under the form. It takes
 * only `setError`, so a form whose schema transforms what was typed (text to numbers) fits too.
 */
export function applyProblem<T extends FieldValues>(form: { setError: UseFormSetError<T> }, error: unknown): void {
  const { detail, fields } = problemOf(error);
  for (const [field, message] of Object.entries(fields)) {
    // A field named by JSON Pointer (`/inputs/name`, a JSON Schema's answer) is the form's `inputs.name`.
    const path = field.startsWith("/") ? field.slice(1).split("/").join(".") : field;
    form.setError(path as Path<T>, { message });
  }
  form.setError("root", { message: detail });
}

/** A detail page's query while it has nothing to show: its refusal, or that it is loading. */
export function QueryStatus({ query }: { query: { error: unknown; isLoading: boolean } }) {
  if (query.error)
    return (
      <p role="alert" className="text-sm text-destructive">
        {problemOf(query.error).detail}
      </p>
    );
  return query.isLoading ? <p className="text-sm text-muted-foreground">Loading…</p> : null;
}

const noSubscription = () => () => {};

/** False during the server render and hydration, true after: for what depends on the browser alone. */
export function useMounted(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

function ThemedToaster() {
  const { resolvedTheme } = useTheme();
  // The theme is known only in the browser: rendering it before hydration would differ from the server's HTML.
  if (!useMounted()) return null;
  return (
    <Toaster
      position="bottom-right"
      closeButton
      theme={resolvedTheme === "dark" ? "dark" : "light"}
      toastOptions={{
        classNames: { toast: "!bg-card !text-foreground !border-border", description: "!text-muted-foreground" },
      }}
    />
  );
}

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: {
            staleTime: 5_000,
            retry: (count, error) =>
              !(
                error instanceof TRPCClientError &&
                ["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND"].includes(error.data?.code)
              ) && count < 2,
          },
        },
      }),
  );
  // Live views (subscriptions) travel over one server-sent-events stream each; the rest is batched.
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: "/api/trpc" }),
          false: httpBatchLink({ url: "/api/trpc", maxItems: 10 }),
        }),
      ],
    }),
  );
  return (
    <ThemeProvider attribute="class" defaultTheme="system" enableSystem disableTransitionOnChange>
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
          {children}
          <ThemedToaster />
        </TRPCProvider>
      </QueryClientProvider>
    </ThemeProvider>
  );
}
