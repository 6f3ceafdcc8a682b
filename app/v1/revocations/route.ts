import { serve } from "@/server/http/gate";
import { listRevocationsOp } from "@/server/identity/operations";

export const GET = serve(listRevocationsOp);
