import NextAuth from "next-auth";
import { authOptions } from "@/server/members/nextAuth";
import { withBoundedBody } from "@/server/members/passkeyRoutes";

// Sign-in callbacks answer anyone: their bodies are bounded before next-auth reads them.
const handler = withBoundedBody(
  NextAuth(authOptions) as (
    request: Request,
    context: { params: Promise<{ nextauth: string[] }> },
  ) => Promise<Response>,
);
export { handler as GET, handler as POST };
