-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "status_code" INTEGER,
    "success" BOOLEAN NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "response_excerpt" TEXT,
    "error" TEXT,
    "next_attempt_at" DATETIME,
    "created_at" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "webhook_delivery_subscription_id_created_at_idx" ON "webhook_delivery"("subscription_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_delivery_subscription_id_event_id_idx" ON "webhook_delivery"("subscription_id", "event_id");
