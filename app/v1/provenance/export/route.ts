import { serve } from "@/server/http/gate";
import { exportOp } from "@/server/provenance/operations";

export const GET = serve(exportOp);
