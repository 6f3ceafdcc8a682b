import { serve } from "@/server/http/gate";
import { consistencyOp } from "@/server/provenance/operations";

export const GET = serve(consistencyOp);
