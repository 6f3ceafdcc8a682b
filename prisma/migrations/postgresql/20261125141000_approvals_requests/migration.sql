-- Approval requests and the grants bound to approved parameters (issue 16; see prisma/schema.prisma).

-- CreateTable
CREATE TABLE "approval_request" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "task_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "requester_passport_id" TEXT NOT NULL,
    "requester_delegation_id" TEXT NOT NULL,
    "requester_grantor_did" TEXT,
    "approver_passport_id" TEXT,
    "approver_dids" TEXT,
    "approver_role" TEXT,
    "action_description" TEXT NOT NULL,
    "risk_level" TEXT NOT NULL,
    "risk_rank" INTEGER NOT NULL,
    "risk_factors" JSONB NOT NULL,
    "request_data" JSONB NOT NULL,
    "request_hash" TEXT NOT NULL,
    "alternatives" JSONB NOT NULL,
    "conversation_id" TEXT,
    "escalation_schema" JSONB,
    "escalation_level" INTEGER NOT NULL DEFAULT 0,
    "next_escalation_at" TIMESTAMP(3),
    "expires_at" TIMESTAMP(3) NOT NULL,
    "responded_by" TEXT,
    "response_comment" TEXT,
    "modified_params" JSONB,
    "responded_at" TIMESTAMP(3),
    "delegated_to" TEXT,
    "override_action" TEXT,
    "decision_hash" TEXT,
    "step_up" TEXT,
    "end_reason" TEXT,
    "waiter_kind" TEXT,
    "waiter_ref" TEXT,
    "provenance_id" TEXT,
    "decision_provenance_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "approval_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approval_grant" (
    "approval_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "params_hash" TEXT NOT NULL,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "approval_grant_pkey" PRIMARY KEY ("approval_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "approval_request_waiter_kind_waiter_ref_key" ON "approval_request"("waiter_kind", "waiter_ref");

-- CreateIndex
CREATE INDEX "approval_request_org_did_status_risk_rank_created_at_idx" ON "approval_request"("org_did", "status", "risk_rank", "created_at");

-- CreateIndex
CREATE INDEX "approval_request_org_did_created_at_idx" ON "approval_request"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "approval_request_requester_delegation_id_status_idx" ON "approval_request"("requester_delegation_id", "status");

-- CreateIndex
CREATE INDEX "approval_request_status_expires_at_idx" ON "approval_request"("status", "expires_at");

-- CreateIndex
CREATE INDEX "approval_request_status_next_escalation_at_idx" ON "approval_request"("status", "next_escalation_at");
