import { inviteStatusRoute } from "@/server/members/passkeyRoutes";

export const GET = inviteStatusRoute;
