import { walledGardenOp } from "@/server/compliance/operations";
import { serve } from "@/server/http/gate";

export const GET = serve(walledGardenOp);
