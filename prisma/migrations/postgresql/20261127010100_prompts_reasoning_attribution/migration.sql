-- Reasoning calls name the prompt version they rendered; feedback carries a signal (issue 19 items 3, 5)
ALTER TABLE "reasoning_call" ADD COLUMN "prompt_key" TEXT;
ALTER TABLE "reasoning_call" ADD COLUMN "prompt_version" TEXT;
ALTER TABLE "reasoning_call" ADD COLUMN "feedback_signal" TEXT;

-- CreateIndex: covers the prompt performance and affinity GROUP BY (every column it reads, in its order)
CREATE INDEX "reasoning_call_prompt_affinity_idx" ON "reasoning_call"("org_did", "prompt_key", "model", "provider", "status", "feedback_signal", "created_at", "duration_ms", "cost_usd", "input_tokens", "output_tokens");
