import { consoleQuery } from "../trpc/procedures";
import { router } from "../trpc/init";
import { dashboardProcedure } from "./consoleProcedures";

/** The console's overview: its dashboard. */
export const overviewRouter = router({
  dashboard: consoleQuery(dashboardProcedure),
});
