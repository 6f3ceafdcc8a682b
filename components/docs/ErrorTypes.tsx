/** One problem type as the reference lists it. */
export interface ProblemTypeEntry {
  code: string;
  status: number | string;
  title: string;
  meaning: string;
  fix: string;
}

/** The entries quote headers and fields between backticks: shown as code. */
function withCode(text: string) {
  return text.split("`").map((part, i) =>
    i % 2 === 1 ? (
      <code key={i} className="rounded bg-muted px-1 font-mono text-xs">
        {part}
      </code>
    ) : (
      part
    ),
  );
}

/** The problem types reference: every `type` link of a problem+json answer lands on its entry here. */
export function ErrorTypes({ types }: { types: readonly ProblemTypeEntry[] }) {
  return (
    <div className="max-w-3xl">
      <h1 className="text-2xl font-semibold tracking-tight">Problem types</h1>
      <p className="mt-1 text-sm text-muted-foreground">
        Every error is an RFC 7807 <code className="font-mono text-xs">application/problem+json</code> document whose{" "}
        <code className="font-mono text-xs">type</code> links to its entry here.
      </p>
      <nav aria-label="Problem types" className="mt-4 flex flex-wrap gap-1.5">
        {types.map((p) => (
          <a
            key={p.code}
            href={`#${p.code}`}
            className="rounded-full bg-muted px-2 py-0.5 font-mono text-xs text-muted-foreground hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          >
            {p.code}
          </a>
        ))}
      </nav>
      <div className="mt-6 space-y-3">
        {types.map((p) => (
          <section
            key={p.code}
            id={p.code}
            className="scroll-mt-16 rounded-lg border border-border bg-card p-4 shadow-sm target:ring-2 target:ring-ring"
          >
            <h2 className="flex flex-wrap items-baseline gap-x-2 text-base font-semibold">
              <span>
                {p.status} · {p.title}
              </span>
              <code className="font-mono text-xs font-normal text-muted-foreground">#{p.code}</code>
            </h2>
            <p className="mt-2 text-sm">{withCode(p.meaning)}</p>
            <p className="mt-2 text-sm">
              <strong>Fix:</strong> {withCode(p.fix)}
            </p>
          </section>
        ))}
      </div>
    </div>
  );
}
