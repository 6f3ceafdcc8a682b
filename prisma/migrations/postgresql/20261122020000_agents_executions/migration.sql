-- Agents, their versions, executions, their logs and callback attempts, and signing secrets
-- (see prisma/schema.prisma).

-- CreateTable
CREATE TABLE "agent" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "passport_id" TEXT,
    "status" TEXT NOT NULL,
    "status_error" JSONB,
    "capabilities" JSONB NOT NULL,
    "current_version_id" TEXT,
    "deployed_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "agent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_version" (
    "id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "manifest" JSONB NOT NULL,
    "bundle" BYTEA NOT NULL,
    "bundle_hash" TEXT NOT NULL,
    "memory_mb" INTEGER NOT NULL,
    "timeout_ms" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "error" JSONB,
    "profile" TEXT,
    "region" TEXT,
    "trace_id" TEXT NOT NULL,
    "deployed_by" TEXT NOT NULL,
    "deployed_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "agent_version_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "async_execution" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "agent_version_id" TEXT NOT NULL,
    "task_id" TEXT,
    "requester_passport_id" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "input" JSONB,
    "result_json" JSONB,
    "error_json" JSONB,
    "progress_percent" INTEGER NOT NULL DEFAULT 0,
    "progress_message" TEXT,
    "callback_url" TEXT,
    "callback_success" BOOLEAN,
    "callback_attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 3,
    "current_attempt" INTEGER NOT NULL DEFAULT 0,
    "queued_at" TIMESTAMP(3) NOT NULL,
    "started_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),
    "provenance_id" TEXT,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "async_execution_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "execution_log" (
    "id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "level" TEXT NOT NULL,
    "line" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "execution_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "callback_attempt" (
    "id" TEXT NOT NULL,
    "execution_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "success" BOOLEAN NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "next_attempt_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "callback_attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signing_secret" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "ciphertext" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3),
    CONSTRAINT "signing_secret_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "agent_org_did_name_key" ON "agent"("org_did", "name");

-- CreateIndex
CREATE INDEX "agent_org_did_created_at_idx" ON "agent"("org_did", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "agent_version_agent_id_seq_key" ON "agent_version"("agent_id", "seq");

-- CreateIndex
CREATE INDEX "async_execution_org_did_queued_at_idx" ON "async_execution"("org_did", "queued_at");

-- CreateIndex
CREATE INDEX "async_execution_org_did_status_queued_at_idx" ON "async_execution"("org_did", "status", "queued_at");

-- CreateIndex
CREATE INDEX "async_execution_org_did_agent_id_queued_at_idx" ON "async_execution"("org_did", "agent_id", "queued_at");

-- CreateIndex
CREATE INDEX "async_execution_delegation_id_status_idx" ON "async_execution"("delegation_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "execution_log_execution_id_seq_key" ON "execution_log"("execution_id", "seq");

-- CreateIndex
CREATE INDEX "callback_attempt_execution_id_attempt_idx" ON "callback_attempt"("execution_id", "attempt");

-- CreateIndex
CREATE INDEX "signing_secret_org_did_purpose_idx" ON "signing_secret"("org_did", "purpose");

-- AddForeignKey
ALTER TABLE "agent" ADD CONSTRAINT "agent_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_version" ADD CONSTRAINT "agent_version_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agent"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "async_execution" ADD CONSTRAINT "async_execution_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agent"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "async_execution" ADD CONSTRAINT "async_execution_agent_version_id_fkey" FOREIGN KEY ("agent_version_id") REFERENCES "agent_version"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "async_execution" ADD CONSTRAINT "async_execution_delegation_id_fkey" FOREIGN KEY ("delegation_id") REFERENCES "delegation"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "execution_log" ADD CONSTRAINT "execution_log_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "async_execution"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "callback_attempt" ADD CONSTRAINT "callback_attempt_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "async_execution"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signing_secret" ADD CONSTRAINT "signing_secret_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization"("org_did") ON DELETE RESTRICT ON UPDATE CASCADE;
