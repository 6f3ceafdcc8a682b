// Asks a person before paying an invoice. `ctx.approvals.request` files an approval request and
// pauses the run (it holds no sandbox thread meanwhile); the decision resumes it, and the run
// starts over, getting the settled answer at once. Deployed and decided in README's *Approvals*.
export default async (input, ctx) => {
  ctx.progress(10, "asking for approval");
  const decision = await ctx.approvals.request({
    action_description: `Pay invoice ${input.invoice_id} (${input.amount} EUR)`,
    risk_level: "medium",
    request_data: { invoice_id: input.invoice_id, amount: input.amount },
  });
  ctx.progress(100, `decision: ${decision.status}`);
  const approved = decision.status === "approved" || decision.status === "approved_with_modifications";
  // `params` is what was approved: a modification replaces what was asked.
  return { paid: approved, status: decision.status, params: decision.params, comment: decision.comment };
};
