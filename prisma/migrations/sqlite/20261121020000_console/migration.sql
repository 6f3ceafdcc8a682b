-- CreateTable
CREATE TABLE "member" (
    "passport_did" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "invited_by" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "webauthn_credential" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "passport_did" TEXT NOT NULL,
    "public_key" BLOB NOT NULL,
    "counter" BIGINT NOT NULL,
    "transports" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" DATETIME
);

-- CreateTable
CREATE TABLE "webauthn_challenge" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "challenge" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "subject" TEXT,
    "expires_at" DATETIME NOT NULL,
    "used_at" DATETIME,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "invite" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "token_hash" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'invite',
    "note" TEXT,
    "created_by" TEXT,
    "expires_at" DATETIME NOT NULL,
    "used_at" DATETIME,
    "used_by" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "member_org_did_created_at_idx" ON "member"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "webauthn_credential_passport_did_idx" ON "webauthn_credential"("passport_did");

-- CreateIndex
CREATE UNIQUE INDEX "webauthn_challenge_challenge_key" ON "webauthn_challenge"("challenge");

-- CreateIndex
CREATE INDEX "webauthn_challenge_expires_at_idx" ON "webauthn_challenge"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "invite_token_hash_key" ON "invite"("token_hash");

-- CreateIndex
CREATE INDEX "invite_org_did_created_at_idx" ON "invite"("org_did", "created_at");
