import type { Contributions } from "../contributions";

/** The webhooks area's part of the catalogues (its capabilities are the events area's, `svc_api:events:*`). */
export const webhookContributions = {
  platformEvents: [
    {
      pattern: "webhook.disabled",
      readCapability: "svc_api:events:read",
      description: "a webhook was disabled",
      types: ["webhook.disabled"],
    },
  ],
  nav: [{ href: "/webhooks", label: "Webhooks", section: "Run", icon: "Webhook" }],
} satisfies Contributions;
