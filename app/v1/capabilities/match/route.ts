import { serve } from "@/server/http/gate";
import { matchCapabilitiesOp } from "@/server/identity/operations";

export const POST = serve(matchCapabilitiesOp);
