import { serve } from "@/server/http/gate";
import { getPassportOp, updatePassportOp } from "@/server/identity/operations";

export const GET = serve(getPassportOp);
export const PATCH = serve(updatePassportOp);
