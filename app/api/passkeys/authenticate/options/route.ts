import { authenticateOptionsRoute } from "@/server/members/passkeyRoutes";

export const POST = authenticateOptionsRoute;
