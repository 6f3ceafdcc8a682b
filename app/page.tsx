export default function Home() {
  return (
    <main style={{ fontFamily: "system-ui", padding: 32 }}>
      <h1>svc</h1>
      <p>The governed agent platform. See the <a href="/docs/api">API reference</a>.</p>
    </main>
  );
}
