import { z } from "zod";
import { EXAMPLE } from "../openapi/examples";
import { Capability, PassportType } from "./passportSchemas";

// Pure zod: matching required capabilities against passports.

const RequiredCapabilities = z.array(Capability).min(1).max(100);

/**
 * `requiredCapabilities` is the spec's name; the answer says `required_capabilities`, so callers
 * who copy the answer's spelling are accepted too (input only). Exactly one of the two is given.
 */
export const CapabilityMatchRequest = z
  .object({
    requiredCapabilities: RequiredCapabilities.optional().describe(
      "The capabilities to match (the spec's name). Exactly one of requiredCapabilities and required_capabilities is required.",
    ),
    required_capabilities: RequiredCapabilities.optional().describe(
      "Alias of requiredCapabilities, spelled as in the response; send one or the other, not both.",
    ),
    agent_ids: z.array(z.string().max(512)).max(100).optional().describe("Only consider these passports / agents"),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.requiredCapabilities && body.required_capabilities)
      ctx.addIssue({
        code: "custom",
        path: ["required_capabilities"],
        message: "Send requiredCapabilities or its alias required_capabilities, not both.",
        params: { code: "CONFLICTING_FIELDS" },
      });
    else if (!body.requiredCapabilities && !body.required_capabilities)
      ctx.addIssue({
        code: "custom",
        path: ["requiredCapabilities"],
        message: "requiredCapabilities is required.",
        params: { code: "REQUIRED_FIELD_MISSING" },
      });
  })
  .transform(({ requiredCapabilities, required_capabilities, ...rest }) => ({
    ...rest,
    requiredCapabilities: (requiredCapabilities ?? required_capabilities)!,
  }))
  .meta({
    id: "CapabilityMatchRequest",
    example: { requiredCapabilities: [...EXAMPLE.capabilities], agent_ids: [EXAMPLE.agentDid] },
  });

export const CapabilityMatch = z.object({
  passport_id: z.string(),
  type: PassportType,
  name: z.string(),
  covered: z.boolean().describe("Whether the passport's active delegations cover every required capability"),
  missing_capabilities: z.array(z.string()),
});

export const CapabilityMatchResponse = z
  .object({
    data: z.object({
      required_capabilities: z.array(z.string()),
      matches: z.array(CapabilityMatch).describe("Passports covering every required capability"),
      partial: z.array(CapabilityMatch).describe("Passports covering some but not all"),
    }),
  })
  .meta({
    id: "CapabilityMatchResponse",
    example: {
      data: {
        required_capabilities: [...EXAMPLE.capabilities],
        matches: [
          {
            passport_id: EXAMPLE.agentDid,
            type: "agent",
            name: "invoice-triage",
            covered: true,
            missing_capabilities: [],
          },
        ],
        partial: [],
      },
    },
  });
