import { ERROR_CODES, errorEntry } from "@/server/errorCatalogue";

export const metadata = { title: "Error types · svc" };

export default function ErrorTypesPage() {
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", maxWidth: 880, margin: "0 auto", padding: "48px 24px", lineHeight: 1.5 }}>
      <h1>Problem types</h1>
      <p>Every error is an RFC 7807 <code>application/problem+json</code> document whose <code>type</code> links to its entry here.</p>
      {ERROR_CODES.map((code) => ({ code, ...errorEntry(code) })).map((p) => (
        <section key={p.code} id={p.code} style={{ borderTop: "1px solid #ddd", padding: "16px 0" }}>
          <h2 style={{ fontSize: 18, margin: 0 }}>
            {[p.status, ...(p.otherStatuses ?? [])].join(" / ")} · {p.title} <code style={{ fontSize: 14, color: "#666" }}>#{p.code}</code>
          </h2>
          <p>{p.description}</p>
          <p>
            <strong>Fix:</strong> {p.fix}
          </p>
        </section>
      ))}
    </main>
  );
}
