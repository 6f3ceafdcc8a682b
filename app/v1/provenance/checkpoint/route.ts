import { serve } from "@/server/http/gate";
import { checkpointOp } from "@/server/provenance/operations";

export const GET = serve(checkpointOp);
