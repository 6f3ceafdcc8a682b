import { deploymentComplianceOp } from "@/server/compliance/operations";
import { serve } from "@/server/http/gate";

export const GET = serve(deploymentComplianceOp);
