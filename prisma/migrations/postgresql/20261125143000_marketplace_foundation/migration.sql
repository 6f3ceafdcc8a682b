-- CreateTable
CREATE TABLE "connector_installation" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "deployment_mode" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "granted_permissions" JSONB NOT NULL,
    "base_url" TEXT,
    "installed_by" TEXT NOT NULL,
    "installed_by_delegation_id" TEXT,
    "access_token_sealed" TEXT,
    "refresh_token_sealed" TEXT,
    "token_expires_at" TIMESTAMP(3),
    "granted_scopes" TEXT,
    "health_status" TEXT NOT NULL DEFAULT 'unknown',
    "health_checked_at" TIMESTAMP(3),
    "health_detail" TEXT,
    "pending_expires_at" TIMESTAMP(3),
    "installed_at" TIMESTAMP(3),
    "uninstalled_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "connector_installation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connector_oauth_state" (
    "state_hash" TEXT NOT NULL,
    "installation_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "installer_did" TEXT NOT NULL,
    "code_verifier_sealed" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "return_to" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connector_oauth_state_pkey" PRIMARY KEY ("state_hash")
);

-- CreateTable
CREATE TABLE "connector_invocation" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "installation_id" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "provenance_record_id" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connector_invocation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connector_rating" (
    "id" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "rating" INTEGER NOT NULL,
    "review_text" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "connector_rating_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "connector_health" (
    "connector_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "checked_at" TIMESTAMP(3) NOT NULL,
    "detail" TEXT,
    CONSTRAINT "connector_health_pkey" PRIMARY KEY ("connector_id")
);

-- CreateTable
CREATE TABLE "connector_client" (
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_secret_sealed" TEXT,
    "updated_by" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "connector_client_pkey" PRIMARY KEY ("org_did", "connector_id")
);

-- CreateIndex
CREATE INDEX "connector_installation_org_did_created_at_idx" ON "connector_installation"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "connector_installation_connector_id_status_idx" ON "connector_installation"("connector_id", "status");

-- CreateIndex
CREATE INDEX "connector_installation_status_token_expires_at_idx" ON "connector_installation"("status", "token_expires_at");

-- CreateIndex
CREATE INDEX "connector_installation_status_pending_expires_at_idx" ON "connector_installation"("status", "pending_expires_at");

-- CreateIndex
CREATE INDEX "connector_oauth_state_installation_id_idx" ON "connector_oauth_state"("installation_id");

-- CreateIndex
CREATE INDEX "connector_oauth_state_expires_at_idx" ON "connector_oauth_state"("expires_at");

-- CreateIndex
CREATE INDEX "connector_invocation_installation_id_created_at_idx" ON "connector_invocation"("installation_id", "created_at");

-- CreateIndex
CREATE INDEX "connector_invocation_connector_id_created_at_idx" ON "connector_invocation"("connector_id", "created_at");

-- CreateIndex
CREATE INDEX "connector_invocation_org_did_connector_id_status_idx" ON "connector_invocation"("org_did", "connector_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "connector_rating_connector_id_user_id_key" ON "connector_rating"("connector_id", "user_id");

-- CreateIndex
CREATE INDEX "connector_rating_connector_id_updated_at_idx" ON "connector_rating"("connector_id", "updated_at");
