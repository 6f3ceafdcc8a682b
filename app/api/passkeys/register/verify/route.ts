import { registerVerifyRoute } from "@/server/members/passkeyRoutes";

export const POST = registerVerifyRoute;
