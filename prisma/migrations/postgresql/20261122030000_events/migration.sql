-- The event bus: events, subscriptions (webhooks and agent triggers) and what each event matched
-- (see prisma/schema.prisma).

-- CreateTable
CREATE TABLE "event" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "sender_id" TEXT,
    "source" TEXT,
    "occurred_at" TIMESTAMP(3) NOT NULL,
    "ingested_via" TEXT NOT NULL,
    "actor_did" TEXT NOT NULL,
    "delegation_id" TEXT,
    "provenance_id" TEXT,
    "provenance_seq" BIGINT,
    "request_id" TEXT NOT NULL,
    "depth" INTEGER NOT NULL DEFAULT 0,
    "answer" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "event_types" JSONB NOT NULL,
    "target_url" TEXT NOT NULL DEFAULT '',
    "agent_id" TEXT,
    "description" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL,
    "created_by_delegation_id" TEXT,
    "secret_sealed" TEXT,
    "previous_secret_sealed" TEXT,
    "previous_expires_at" TIMESTAMP(3),
    "failing_since" TIMESTAMP(3),
    "disabled_reason" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_match" (
    "event_id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "execution_id" TEXT,
    "delivery_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "event_match_pkey" PRIMARY KEY ("event_id", "subscription_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "event_org_did_sender_id_key" ON "event"("org_did", "sender_id");

-- CreateIndex
CREATE INDEX "event_org_did_created_at_idx" ON "event"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "event_org_did_type_created_at_idx" ON "event"("org_did", "type", "created_at");

-- CreateIndex
CREATE INDEX "subscription_org_did_kind_status_idx" ON "subscription"("org_did", "kind", "status");

-- CreateIndex
CREATE INDEX "subscription_org_did_created_at_idx" ON "subscription"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "subscription_agent_id_idx" ON "subscription"("agent_id");

-- CreateIndex
CREATE INDEX "subscription_created_by_delegation_id_idx" ON "subscription"("created_by_delegation_id");

-- CreateIndex
CREATE INDEX "subscription_updated_at_idx" ON "subscription"("updated_at");

-- CreateIndex
CREATE INDEX "event_match_subscription_id_idx" ON "event_match"("subscription_id");

-- CreateIndex
CREATE INDEX "event_match_execution_id_idx" ON "event_match"("execution_id");

-- AddForeignKey
ALTER TABLE "event_match" ADD CONSTRAINT "event_match_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "event"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
