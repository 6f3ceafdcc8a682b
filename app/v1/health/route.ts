import { health } from "@/server/meta/health";

export const GET = health;
