import Link from "next/link";
import { Brand } from "@/components/console/ConsoleShell";

export const metadata = { title: "Not found · svc" };

/** Any path the console does not serve: the console's look, and the ways back. */
export default function NotFound() {
  return (
    <main id="main" className="grid min-h-screen place-items-center px-4">
      <div className="w-full max-w-md rounded-lg border border-border bg-card p-8 shadow-sm">
        <Brand />
        <p className="mt-6 font-mono text-sm text-muted-foreground">404</p>
        <h1 className="mt-1 text-2xl font-semibold tracking-tight">This page does not exist</h1>
        <p className="mt-2 text-sm text-muted-foreground">
          The address may be mistyped, or the page moved. API paths live under /v1 and answer JSON.
        </p>
        <div className="mt-6 flex flex-wrap gap-2">
          <Link
            href="/overview"
            className="inline-flex h-9 items-center rounded-md bg-primary px-4 text-sm font-medium text-primary-foreground hover:opacity-90 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring focus-visible:ring-offset-2"
          >
            Go to the console
          </Link>
          <Link
            href="/docs/api"
            className="inline-flex h-9 items-center rounded-md border border-border bg-card px-4 text-sm font-medium hover:bg-muted focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          >
            API reference
          </Link>
        </div>
      </div>
    </main>
  );
}
