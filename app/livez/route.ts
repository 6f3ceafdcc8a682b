/** Liveness: answers without touching the database (also the benchmark's bare route). */
export function GET(): Response {
  return new Response('{"status":"ok"}', { headers: { "Content-Type": "application/json" } });
}
