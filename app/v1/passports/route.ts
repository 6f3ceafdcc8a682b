import { serve } from "@/server/http/gate";
import { createPassportOp, listPassportsOp } from "@/server/identity/operations";

export const GET = serve(listPassportsOp);
export const POST = serve(createPassportOp);
