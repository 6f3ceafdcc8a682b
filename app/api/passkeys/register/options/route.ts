import { registerOptionsRoute } from "@/server/members/passkeyRoutes";

export const POST = registerOptionsRoute;
