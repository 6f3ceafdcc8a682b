import { router } from "../trpc/init";
import { mutationFrom, queryFrom } from "../trpc/procedures";
import * as op from "./operations";

/** The console's organization procedures: built from the /v1/cp/orgs operations. */
export const controlPlaneRouter = router({
  orgs: router({
    list: queryFrom(op.listOrgsOp),
    get: queryFrom(op.getOrgOp),
    create: mutationFrom(op.createOrgOp),
    update: mutationFrom(op.updateOrgOp),
  }),
});
