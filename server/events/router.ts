import { mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import * as op from "./operations";

/** The console's event procedures, built from the /v1 operations. */
export const eventsRouter = router({
  list: queryFrom(op.listEventsOp),
  get: queryFrom(op.getEventOp),
  emit: mutationFrom(op.emitEventOp),
});
