import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { contextFromHeaders } from "@/server/trpc/init";
import { appRouter } from "@/server/trpc/root";

const handler = (req: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => contextFromHeaders(req.headers, req.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown"),
  });

export { handler as GET, handler as POST };
