import { serve } from "@/server/http/gate";
import { revokeDelegationOp } from "@/server/identity/operations";

export const POST = serve(revokeDelegationOp);
