-- The delivery log shows what was sent (issue 14 item 10)
ALTER TABLE "webhook_delivery" ADD COLUMN "event_type" TEXT;
ALTER TABLE "webhook_delivery" ADD COLUMN "request_headers" TEXT;
ALTER TABLE "webhook_delivery" ADD COLUMN "request_body" TEXT;
ALTER TABLE "webhook_delivery" ADD COLUMN "request_body_truncated" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "webhook_delivery" ADD COLUMN "response_headers" TEXT;

-- A re-enabled webhook names the revoked delegation it was moved from (issue 14 item 17)
ALTER TABLE "subscription" ADD COLUMN "rebound_from_delegation_id" TEXT;

-- Trigger fan-out is counted per event from outside (issue 14 item 20)
ALTER TABLE "event" ADD COLUMN "root_event_id" TEXT;
CREATE INDEX "event_root_event_id_idx" ON "event"("root_event_id");
