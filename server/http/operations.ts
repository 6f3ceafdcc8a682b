import { areaOperations } from "../areas";
import type { Operation } from "./operation";

/** Every governed /v1 operation, from the composition root (server/areas.ts): the OpenAPI document and the route tests are built from this list. */
export const operations: Operation[] = [...areaOperations];
