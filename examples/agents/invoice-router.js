// A trigger agent: its manifest's `on` starts it for every `invoice.*` event. The handler gets
// {event_id, event_type, payload, org_did, verification} and decides where the invoice goes.
export default async (input, ctx) => {
  const amount = Number(input.payload?.amount ?? 0);
  const route = amount >= 1000 ? "finance-review" : "auto-approve";
  ctx.log(`${input.event_type} ${input.payload?.invoice_id ?? "?"}: ${amount} → ${route}`);
  return {
    invoice_id: input.payload?.invoice_id ?? null,
    route,
    event_id: input.event_id,
    recorded_as: input.verification.provenance_record_id,
  };
};
