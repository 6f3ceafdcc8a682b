-- CreateTable
CREATE TABLE "connector_installation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "deployment_mode" TEXT NOT NULL,
    "config" TEXT NOT NULL,
    "granted_permissions" TEXT NOT NULL,
    "base_url" TEXT,
    "installed_by" TEXT NOT NULL,
    "installed_by_delegation_id" TEXT,
    "access_token_sealed" TEXT,
    "refresh_token_sealed" TEXT,
    "token_expires_at" DATETIME,
    "granted_scopes" TEXT,
    "health_status" TEXT NOT NULL DEFAULT 'unknown',
    "health_checked_at" DATETIME,
    "health_detail" TEXT,
    "pending_expires_at" DATETIME,
    "installed_at" DATETIME,
    "uninstalled_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "connector_oauth_state" (
    "state_hash" TEXT NOT NULL PRIMARY KEY,
    "installation_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "installer_did" TEXT NOT NULL,
    "code_verifier_sealed" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "return_to" TEXT,
    "expires_at" DATETIME NOT NULL,
    "used_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "connector_invocation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "installation_id" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "provenance_record_id" TEXT,
    "error" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "connector_rating" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "connector_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "rating" INTEGER NOT NULL,
    "review_text" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "connector_health" (
    "connector_id" TEXT NOT NULL PRIMARY KEY,
    "status" TEXT NOT NULL,
    "checked_at" DATETIME NOT NULL,
    "detail" TEXT
);

-- CreateTable
CREATE TABLE "connector_client" (
    "org_did" TEXT NOT NULL,
    "connector_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "client_secret_sealed" TEXT,
    "updated_by" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,

    PRIMARY KEY ("org_did", "connector_id")
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
