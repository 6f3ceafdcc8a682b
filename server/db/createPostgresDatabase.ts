/**
 * PostgreSQL: creates the database a `postgres://…/<name>` URL names when the server answers that
 * it does not exist (3D000), through the server's `postgres` maintenance database, with the same
 * credentials. A deployment's first start (`npm start`, `npx svc migrate --init`) then needs only
 * a role allowed to create databases; without that right the error says the exact command to run.
 * Two processes creating it at once are fine: the loser's "already exists" (42P04) counts as done.
 */
export async function createPostgresDatabaseIfMissing(url: string, log: (l: string) => void): Promise<boolean> {
  const { default: pg } = await import("pg");
  const probe = new pg.Client({ connectionString: url });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
    return false;
  } catch (e) {
    if ((e as { code?: string }).code !== "3D000") throw e;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ""));
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  admin.on("error", () => undefined);
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    log(`svc: created the PostgreSQL database ${name} on ${target.hostname}`);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "42P04") return false;
    const user = target.username ? decodeURIComponent(target.username) : "<user>";
    throw new Error(
      `The PostgreSQL database ${name} does not exist and svc could not create it (${(e as Error).message}). ` +
        `Create it once, e.g. createdb -h ${target.hostname}${target.port ? ` -p ${target.port}` : ""} -U ${user} ${name} ` +
        `(or CREATE DATABASE "${name}"; as a role allowed to), then start again.`,
      { cause: e },
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}
