-- Workflows: definitions run as DAGs of durable jobs (issue 16 items 7-9)
-- CreateTable
CREATE TABLE "workflow" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "name" TEXT,
    "input" JSONB,
    "status" TEXT NOT NULL,
    "started_by_did" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "error" JSONB,
    "provenance_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "completed_at" TIMESTAMP(3),
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "workflow_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflow_node" (
    "id" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "node_type" TEXT NOT NULL,
    "node_name" TEXT,
    "status" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "config" JSONB,
    "input" JSONB,
    "output" JSONB,
    "error" JSONB,
    "agent_id" TEXT,
    "execution_id" TEXT,
    "approval_id" TEXT,
    "provenance_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "started_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),
    "duration_ms" INTEGER,
    CONSTRAINT "workflow_node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflow_edge" (
    "id" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "from_node_id" TEXT NOT NULL,
    "to_node_id" TEXT NOT NULL,
    "edge_type" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    CONSTRAINT "workflow_edge_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "workflow_org_did_created_at_idx" ON "workflow"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "workflow_org_did_status_created_at_idx" ON "workflow"("org_did", "status", "created_at");

-- CreateIndex
CREATE INDEX "workflow_delegation_id_idx" ON "workflow"("delegation_id");

-- CreateIndex
CREATE INDEX "workflow_node_workflow_id_position_idx" ON "workflow_node"("workflow_id", "position");

-- CreateIndex
CREATE INDEX "workflow_node_execution_id_idx" ON "workflow_node"("execution_id");

-- CreateIndex
CREATE INDEX "workflow_node_approval_id_idx" ON "workflow_node"("approval_id");

-- CreateIndex
CREATE INDEX "workflow_edge_workflow_id_position_idx" ON "workflow_edge"("workflow_id", "position");

-- CreateIndex
CREATE INDEX "workflow_edge_from_node_id_idx" ON "workflow_edge"("from_node_id");

-- CreateIndex
CREATE INDEX "workflow_edge_to_node_id_idx" ON "workflow_edge"("to_node_id");

-- AddForeignKey
ALTER TABLE "workflow_node" ADD CONSTRAINT "workflow_node_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workflow_edge" ADD CONSTRAINT "workflow_edge_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "workflow"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
