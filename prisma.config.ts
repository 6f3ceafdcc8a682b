// Where Prisma's CLI finds svc's models: the folder prisma/schema/, one file per area (Prisma's
// multi-file schema), for `prisma validate`, `prisma format` and editors. The models as written
// are SQLite's; scripts/prisma-generate.mjs renders them per provider into prisma/generated/
// and generates both clients with an explicit `--schema`, and svc applies its migrations
// (prisma/migrations/<provider>/) itself at start (server/db/migrate.ts).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema",
  migrations: { path: "prisma/migrations/sqlite" },
});
