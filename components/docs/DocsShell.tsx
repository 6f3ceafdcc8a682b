import Link from "next/link";
import type { ReactNode } from "react";
import { Brand, ThemeToggle } from "@/components/console/ConsoleShell";

/** The documents' frame for someone not signed in: the console's look, its public links only. */
export function DocsShell({ children }: { children: ReactNode }) {
  const link =
    "rounded-md px-2 py-1 text-sm text-muted-foreground hover:bg-muted hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";
  return (
    <div className="min-h-screen">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-card focus:p-2"
      >
        Skip to content
      </a>
      <header className="sticky top-0 z-30 flex flex-wrap items-center justify-between gap-2 border-b border-border bg-card px-4 py-2 md:px-8">
        <Brand />
        <nav aria-label="Documentation" className="flex flex-wrap items-center gap-1">
          <Link href="/docs/api" className={link}>
            API reference
          </Link>
          <Link href="/docs/errors" className={link}>
            Error types
          </Link>
          <Link href="/sign-in" className={link}>
            Sign in
          </Link>
          <ThemeToggle />
        </nav>
      </header>
      <main id="main" className="min-w-0 px-4 py-5 md:px-8 md:py-6">
        {children}
      </main>
    </div>
  );
}
