export { trpcHandler as GET, trpcHandler as POST } from "@/server/trpc/handler";
