import { jwksResponse } from "@/server/meta/jwks";

export const GET = jwksResponse;
