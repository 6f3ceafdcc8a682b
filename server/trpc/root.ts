import { areaRouters } from "../areas";
import { createCallerFactory, router } from "./init";

/** Every area's router, under the area's name, from the composition root (server/areas.ts). */
export const appRouter = router(areaRouters);

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
