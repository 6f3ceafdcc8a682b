import { serve } from "@/server/http/gate";
import { getDelegationOp } from "@/server/identity/operations";

export const GET = serve(getDelegationOp);
