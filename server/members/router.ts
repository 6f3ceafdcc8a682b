import { router } from "../trpc/init";
import { consoleMutation, consoleQuery } from "../trpc/procedures";
import { inviteProcedure, listMembersProcedure, meProcedure, revokeMemberProcedure } from "./consoleProcedures";

/** People in the console: the console's own procedures (no /v1 route has these). */
export const membersRouter = router({
  me: consoleQuery(meProcedure),
  list: consoleQuery(listMembersProcedure),
  invite: consoleMutation(inviteProcedure),
  revoke: consoleMutation(revokeMemberProcedure),
});
