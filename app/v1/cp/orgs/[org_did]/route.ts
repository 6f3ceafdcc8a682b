import { getOrgOp, updateOrgOp } from "@/server/controlPlane/operations";
import { serve } from "@/server/http/gate";

export const GET = serve(getOrgOp);
export const PATCH = serve(updateOrgOp);
