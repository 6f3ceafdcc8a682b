import NextAuth from "next-auth";
import { authOptions } from "@/server/members/nextAuth";
import { withBoundedBody } from "@/server/members/passkeyRoutes";
import { withSessionReplacement } from "@/server/members/sessionReplacement";

// Sign-in callbacks answer anyone: their bodies are bounded before next-auth reads them. A sign-in
// over a session still open in the same browser ends that session.
const handler = withSessionReplacement(
  withBoundedBody(
    NextAuth(authOptions) as (
      request: Request,
      context: { params: Promise<{ nextauth: string[] }> },
    ) => Promise<Response>,
  ),
);
export { handler as GET, handler as POST };
