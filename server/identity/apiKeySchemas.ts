import { z } from "zod";
import { Capability } from "./passportSchemas";
import { SessionExchangeResponse } from "./sessionSchemas";

// The console's API key form (no /v1 route, so no OpenAPI component).
export const CreateApiKeyRequest = z
  .object({
    name: z.string().trim().min(1).max(200),
    capabilities: z.array(Capability).min(1).max(100),
    days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .default(90)
      .describe("Lifetime in days; it cannot outlive the delegation it derives from"),
  })
  .strict();

export const ApiKeyCreated = SessionExchangeResponse.extend({ name: z.string() });
