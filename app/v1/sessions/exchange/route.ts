import { serve } from "@/server/http/gate";
import { exchangeSessionOp } from "@/server/identity/operations";

export const POST = serve(exchangeSessionOp);
