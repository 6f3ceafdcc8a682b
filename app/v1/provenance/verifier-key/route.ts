import { serve } from "@/server/http/gate";
import { verifierKeyOp } from "@/server/provenance/operations";

export const GET = serve(verifierKeyOp);
