import { serve } from "@/server/http/gate";
import { getProvenanceOp } from "@/server/provenance/operations";

export const GET = serve(getProvenanceOp);
