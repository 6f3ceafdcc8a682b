-- The prompt registry (issue 19 items 1-4)
CREATE TABLE "prompt_profile" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "prompt_key" TEXT NOT NULL,
    "prompt_uri" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "namespace" TEXT NOT NULL,
    "active_version" TEXT NOT NULL,
    "recommended_model" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

CREATE TABLE "prompt_version" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "prompt_key" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "extends_uri" TEXT,
    "extends_id" TEXT,
    "meta" TEXT NOT NULL,
    "input_schema" TEXT,
    "published_by" TEXT NOT NULL,
    "published_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status" TEXT NOT NULL,
    "deprecated_at" DATETIME
);

CREATE TABLE "prompt_history" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "prompt_key" TEXT NOT NULL,
    "change" TEXT NOT NULL,
    "from_value" TEXT,
    "to_value" TEXT,
    "actor_did" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "request_id" TEXT,
    "proposal_id" TEXT,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "prompt_profile_org_did_prompt_key_key" ON "prompt_profile"("org_did", "prompt_key");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_profile_org_did_prompt_uri_key" ON "prompt_profile"("org_did", "prompt_uri");

-- CreateIndex
CREATE INDEX "prompt_profile_org_did_namespace_prompt_key_idx" ON "prompt_profile"("org_did", "namespace", "prompt_key");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_version_org_did_prompt_key_version_key" ON "prompt_version"("org_did", "prompt_key", "version");

-- CreateIndex
CREATE INDEX "prompt_version_org_did_prompt_key_published_at_idx" ON "prompt_version"("org_did", "prompt_key", "published_at");

-- CreateIndex
CREATE INDEX "prompt_history_org_did_prompt_key_at_idx" ON "prompt_history"("org_did", "prompt_key", "at");
