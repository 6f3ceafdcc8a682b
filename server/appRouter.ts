import { areaRouters } from "./areas";
import { createCallerFactory, router } from "./trpc/init";

/**
 * The console's tRPC root: every area's router, under the area's name, from the composition root
 * (server/areas.ts). It sits beside the root, not in server/trpc/: the mechanism never imports the
 * areas; the entry point (app/api/trpc/[trpc]/route.ts) hands this router to the handler.
 */
export const appRouter = router(areaRouters);

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
