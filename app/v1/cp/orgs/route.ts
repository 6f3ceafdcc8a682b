import { createOrgOp, listOrgsOp } from "@/server/controlPlane/operations";
import { serve } from "@/server/http/gate";

export const GET = serve(listOrgsOp);
export const POST = serve(createOrgOp);
