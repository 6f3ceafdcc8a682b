import { serve } from "@/server/http/gate";
import { listDelegationsOp } from "@/server/identity/operations";

export const GET = serve(listDelegationsOp);
