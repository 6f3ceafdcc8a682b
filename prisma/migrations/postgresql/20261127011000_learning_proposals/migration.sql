-- Learning proposals and their tuning actions (issue 19 items 6-8)
CREATE TABLE "learning_proposal" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "proposed" TEXT NOT NULL,
    "previous" TEXT NOT NULL,
    "explain" TEXT,
    "approval_state" TEXT NOT NULL,
    "approval_id" TEXT,
    "proposed_by" TEXT NOT NULL,
    "origin" TEXT NOT NULL DEFAULT 'api',
    "provenance_id" TEXT,
    "changed_at" TIMESTAMP(3) NOT NULL,
    "changed_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "learning_proposal_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "learning_tuning_action" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "proposal_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "actor_did" TEXT NOT NULL,
    "provenance_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "learning_tuning_action_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "learning_proposal_org_did_created_at_idx" ON "learning_proposal"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "learning_proposal_org_did_kind_target_approval_state_idx" ON "learning_proposal"("org_did", "kind", "target", "approval_state");

-- CreateIndex
CREATE INDEX "learning_tuning_action_proposal_id_created_at_idx" ON "learning_tuning_action"("proposal_id", "created_at");
