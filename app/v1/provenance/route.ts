import { serve } from "@/server/http/gate";
import { listProvenanceOp } from "@/server/provenance/operations";

export const GET = serve(listProvenanceOp);
