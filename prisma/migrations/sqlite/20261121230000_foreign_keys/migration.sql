-- Foreign keys where the models relate (see prisma/schema.prisma). SQLite cannot add a
-- constraint to an existing table, so each table is rebuilt (Prisma's RedefineTables pattern):
-- referenced tables before the tables that reference them, so that no dropped table is still
-- referenced. Existing rows that break a key make the migration fail (checked at commit).
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;

-- RedefineTable
CREATE TABLE "new_organization" (
    "org_did" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "deployment_mode" TEXT NOT NULL DEFAULT 'cloud',
    "autonomy_profile" TEXT,
    "data_residency_tier" TEXT,
    "parent_org_did" TEXT,
    "is_root" BOOLEAN NOT NULL DEFAULT false,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "organization_parent_org_did_fkey" FOREIGN KEY ("parent_org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_organization" ("org_did", "name", "slug", "deployment_mode", "autonomy_profile", "data_residency_tier", "parent_org_did", "is_root", "created_at", "updated_at") SELECT "org_did", "name", "slug", "deployment_mode", "autonomy_profile", "data_residency_tier", "parent_org_did", "is_root", "created_at", "updated_at" FROM "organization";
DROP TABLE "organization";
ALTER TABLE "new_organization" RENAME TO "organization";
CREATE UNIQUE INDEX "organization_slug_key" ON "organization"("slug");
CREATE INDEX "organization_parent_org_did_created_at_idx" ON "organization"("parent_org_did", "created_at");

-- RedefineTable
CREATE TABLE "new_passport" (
    "did" TEXT NOT NULL PRIMARY KEY,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "org_did" TEXT NOT NULL,
    "verification_tier" INTEGER NOT NULL DEFAULT 0,
    "identity_tier" INTEGER NOT NULL DEFAULT 0,
    "public_key_jwk" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "passport_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_passport" ("did", "type", "name", "description", "org_did", "verification_tier", "identity_tier", "public_key_jwk", "created_at", "updated_at") SELECT "did", "type", "name", "description", "org_did", "verification_tier", "identity_tier", "public_key_jwk", "created_at", "updated_at" FROM "passport";
DROP TABLE "passport";
ALTER TABLE "new_passport" RENAME TO "passport";
CREATE INDEX "passport_org_did_created_at_idx" ON "passport"("org_did", "created_at");

-- RedefineTable
CREATE TABLE "new_delegation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "grantor_did" TEXT NOT NULL,
    "delegate_did" TEXT NOT NULL,
    "parent_id" TEXT,
    "ancestry" TEXT NOT NULL DEFAULT '',
    "capabilities" TEXT NOT NULL,
    "environment" TEXT,
    "risk_level" TEXT NOT NULL DEFAULT 'standard',
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME NOT NULL,
    "revoked_at" DATETIME,
    CONSTRAINT "delegation_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "delegation_parent_id_fkey" FOREIGN KEY ("parent_id") REFERENCES "delegation" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_delegation" ("id", "org_did", "kind", "name", "grantor_did", "delegate_did", "parent_id", "ancestry", "capabilities", "environment", "risk_level", "created_at", "expires_at", "revoked_at") SELECT "id", "org_did", "kind", "name", "grantor_did", "delegate_did", "parent_id", "ancestry", "capabilities", "environment", "risk_level", "created_at", "expires_at", "revoked_at" FROM "delegation";
DROP TABLE "delegation";
ALTER TABLE "new_delegation" RENAME TO "delegation";
CREATE INDEX "delegation_org_did_created_at_idx" ON "delegation"("org_did", "created_at");
CREATE INDEX "delegation_parent_id_idx" ON "delegation"("parent_id");
CREATE INDEX "delegation_delegate_did_idx" ON "delegation"("delegate_did");

-- RedefineTable
CREATE TABLE "new_revocation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "delegation_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "revoked_by" TEXT NOT NULL,
    "revoked_at" DATETIME NOT NULL,
    "reason" TEXT,
    "metadata" TEXT,
    CONSTRAINT "revocation_delegation_id_fkey" FOREIGN KEY ("delegation_id") REFERENCES "delegation" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "revocation_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_revocation" ("id", "delegation_id", "org_did", "revoked_by", "revoked_at", "reason", "metadata") SELECT "id", "delegation_id", "org_did", "revoked_by", "revoked_at", "reason", "metadata" FROM "revocation";
DROP TABLE "revocation";
ALTER TABLE "new_revocation" RENAME TO "revocation";
CREATE UNIQUE INDEX "revocation_delegation_id_key" ON "revocation"("delegation_id");
CREATE INDEX "revocation_org_did_revoked_at_idx" ON "revocation"("org_did", "revoked_at");

-- RedefineTable
CREATE TABLE "new_member" (
    "passport_did" TEXT NOT NULL PRIMARY KEY,
    "org_did" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "invited_by" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" DATETIME NOT NULL,
    CONSTRAINT "member_passport_did_fkey" FOREIGN KEY ("passport_did") REFERENCES "passport" ("did") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "member_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_member" ("passport_did", "org_did", "role", "display_name", "status", "invited_by", "created_at", "updated_at") SELECT "passport_did", "org_did", "role", "display_name", "status", "invited_by", "created_at", "updated_at" FROM "member";
DROP TABLE "member";
ALTER TABLE "new_member" RENAME TO "member";
CREATE INDEX "member_org_did_created_at_idx" ON "member"("org_did", "created_at");

-- RedefineTable
CREATE TABLE "new_webauthn_credential" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "passport_did" TEXT NOT NULL,
    "public_key" BLOB NOT NULL,
    "counter" BIGINT NOT NULL,
    "transports" TEXT,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" DATETIME,
    CONSTRAINT "webauthn_credential_passport_did_fkey" FOREIGN KEY ("passport_did") REFERENCES "passport" ("did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_webauthn_credential" ("id", "passport_did", "public_key", "counter", "transports", "created_at", "last_used_at") SELECT "id", "passport_did", "public_key", "counter", "transports", "created_at", "last_used_at" FROM "webauthn_credential";
DROP TABLE "webauthn_credential";
ALTER TABLE "new_webauthn_credential" RENAME TO "webauthn_credential";
CREATE INDEX "webauthn_credential_passport_did_idx" ON "webauthn_credential"("passport_did");

-- RedefineTable
CREATE TABLE "new_invite" (
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
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "invite_org_did_fkey" FOREIGN KEY ("org_did") REFERENCES "organization" ("org_did") ON DELETE RESTRICT ON UPDATE CASCADE
);
INSERT INTO "new_invite" ("id", "token_hash", "org_did", "role", "kind", "note", "created_by", "expires_at", "used_at", "used_by", "created_at") SELECT "id", "token_hash", "org_did", "role", "kind", "note", "created_by", "expires_at", "used_at", "used_by", "created_at" FROM "invite";
DROP TABLE "invite";
ALTER TABLE "new_invite" RENAME TO "invite";
CREATE UNIQUE INDEX "invite_token_hash_key" ON "invite"("token_hash");
CREATE INDEX "invite_org_did_created_at_idx" ON "invite"("org_did", "created_at");

PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
