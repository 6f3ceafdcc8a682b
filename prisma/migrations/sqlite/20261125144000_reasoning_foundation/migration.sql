-- Reasoning: providers added in the console, per-organization model edits, routed calls and their attempts, delegation budgets and their charges (issue 18)

-- CreateTable
CREATE TABLE "reasoning_provider" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "base_url" TEXT,
    "api_key_sealed" TEXT,
    "models" TEXT,
    "created_by" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "reasoning_provider_org_did_name_key" ON "reasoning_provider"("org_did", "name");

-- CreateTable
CREATE TABLE "reasoning_model" (
    "org_did" TEXT NOT NULL,
    "model_key" TEXT NOT NULL,
    "status" TEXT,
    "input_cost_per_million" REAL,
    "output_cost_per_million" REAL,
    "updated_at" DATETIME NOT NULL,

    PRIMARY KEY ("org_did", "model_key")
);

-- CreateTable
CREATE TABLE "reasoning_call" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "delegation_id" TEXT,
    "actor_did" TEXT,
    "entity_id" TEXT,
    "task" TEXT NOT NULL,
    "complexity" TEXT NOT NULL,
    "budget_mode" TEXT NOT NULL,
    "pinned_model" TEXT,
    "model" TEXT,
    "provider" TEXT,
    "status" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "alternatives" TEXT NOT NULL,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "reserved_usd" REAL NOT NULL DEFAULT 0,
    "duration_ms" INTEGER,
    "error_code" TEXT,
    "error_message" TEXT,
    "provenance_id" TEXT,
    "request_id" TEXT NOT NULL,
    "feedback_score" INTEGER,
    "feedback_comment" TEXT,
    "feedback_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" DATETIME
);

-- CreateIndex
CREATE INDEX "reasoning_call_org_did_created_at_idx" ON "reasoning_call"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "reasoning_call_delegation_id_created_at_idx" ON "reasoning_call"("delegation_id", "created_at");

-- CreateIndex
CREATE INDEX "reasoning_call_org_did_entity_id_created_at_idx" ON "reasoning_call"("org_did", "entity_id", "created_at");

-- CreateTable
CREATE TABLE "reasoning_attempt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "call_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "complexity" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error_message" TEXT,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "latency_ms" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "reasoning_attempt_org_did_model_created_at_idx" ON "reasoning_attempt"("org_did", "model", "created_at");

-- CreateIndex
CREATE INDEX "reasoning_attempt_call_id_idx" ON "reasoning_attempt"("call_id");

-- CreateTable
CREATE TABLE "delegation_budget" (
    "delegation_id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "limit_usd" REAL NOT NULL,
    "period" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "budget_charge" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "budget_delegation_id" TEXT NOT NULL,
    "call_id" TEXT NOT NULL,
    "amount_usd" REAL NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" DATETIME
);

-- CreateIndex
CREATE INDEX "budget_charge_budget_delegation_id_created_at_idx" ON "budget_charge"("budget_delegation_id", "created_at");

-- CreateIndex
CREATE INDEX "budget_charge_call_id_idx" ON "budget_charge"("call_id");
