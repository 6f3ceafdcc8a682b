import { serve } from "@/server/http/gate";
import { createDelegationTokenOp } from "@/server/identity/operations";

export const POST = serve(createDelegationTokenOp);
