import { openApiResponse } from "@/server/openapi/document";

export const GET = openApiResponse;
