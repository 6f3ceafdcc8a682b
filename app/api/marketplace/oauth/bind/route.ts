import { bindRouteWithSession } from "@/server/marketplace/browserBinding";
import { sessionUser } from "@/server/members/consoleSession";

export const POST = bindRouteWithSession(sessionUser);
