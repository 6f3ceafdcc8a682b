import { serve } from "@/server/http/gate";
import { proofOp } from "@/server/provenance/operations";

export const GET = serve(proofOp);
