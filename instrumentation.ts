/**
 * Next.js calls `register` once when its server starts. Under `npm start` the server (server/main.ts)
 * has already composed the areas before Next.js loads, and this does nothing (composition runs
 * once per process); under `next dev`, where no server/main.ts runs, this is what fills the
 * process's registries (job kinds, bridge entries, revocation hooks, dispatchers, the catalogue's offer).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { composeServer } = await import("./server/areas");
  composeServer();
}
