-- CreateTable
CREATE TABLE "organization" (
    "org_did" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "deployment_mode" TEXT NOT NULL DEFAULT 'cloud',
    "autonomy_profile" TEXT,
    "data_residency_tier" TEXT,
    "parent_org_did" TEXT,
    "is_root" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "organization_pkey" PRIMARY KEY ("org_did")
);

-- CreateTable
CREATE TABLE "passport" (
    "did" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "org_did" TEXT NOT NULL,
    "verification_tier" INTEGER NOT NULL DEFAULT 0,
    "identity_tier" INTEGER NOT NULL DEFAULT 0,
    "public_key_jwk" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "passport_pkey" PRIMARY KEY ("did")
);

-- CreateTable
CREATE TABLE "delegation" (
    "id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "grantor_did" TEXT NOT NULL,
    "delegate_did" TEXT NOT NULL,
    "parent_id" TEXT,
    "ancestry" TEXT NOT NULL DEFAULT '',
    "capabilities" JSONB NOT NULL,
    "environment" TEXT,
    "risk_level" TEXT NOT NULL DEFAULT 'standard',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "delegation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "revocation" (
    "id" TEXT NOT NULL,
    "delegation_id" TEXT NOT NULL,
    "org_did" TEXT NOT NULL,
    "revoked_by" TEXT NOT NULL,
    "revoked_at" TIMESTAMP(3) NOT NULL,
    "reason" TEXT,
    "metadata" JSONB,

    CONSTRAINT "revocation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provenance_record" (
    "id" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "timestamp" TIMESTAMP(3) NOT NULL,
    "org_did" TEXT NOT NULL,
    "actor_did" TEXT,
    "delegation_id" TEXT,
    "grantor_did" TEXT,
    "capability" TEXT,
    "operation" TEXT NOT NULL,
    "resource_type" TEXT,
    "resource_id" TEXT,
    "decision" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "request_hash" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "leaf_hash" TEXT NOT NULL,

    CONSTRAINT "provenance_record_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_key" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "idempotency_key_pkey" PRIMARY KEY ("scope","key")
);

-- CreateTable
CREATE TABLE "service_state" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "service_state_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE UNIQUE INDEX "organization_slug_key" ON "organization"("slug");

-- CreateIndex
CREATE INDEX "organization_parent_org_did_created_at_idx" ON "organization"("parent_org_did", "created_at");

-- CreateIndex
CREATE INDEX "passport_org_did_created_at_idx" ON "passport"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "delegation_org_did_created_at_idx" ON "delegation"("org_did", "created_at");

-- CreateIndex
CREATE INDEX "delegation_parent_id_idx" ON "delegation"("parent_id");

-- CreateIndex
CREATE INDEX "delegation_delegate_did_idx" ON "delegation"("delegate_did");

-- CreateIndex
CREATE UNIQUE INDEX "revocation_delegation_id_key" ON "revocation"("delegation_id");

-- CreateIndex
CREATE INDEX "revocation_org_did_revoked_at_idx" ON "revocation"("org_did", "revoked_at");

-- CreateIndex
CREATE UNIQUE INDEX "provenance_record_seq_key" ON "provenance_record"("seq");

-- CreateIndex
CREATE INDEX "provenance_record_org_did_seq_idx" ON "provenance_record"("org_did", "seq");

-- CreateIndex
CREATE INDEX "provenance_record_org_did_actor_did_seq_idx" ON "provenance_record"("org_did", "actor_did", "seq");

-- CreateIndex
CREATE INDEX "provenance_record_org_did_delegation_id_seq_idx" ON "provenance_record"("org_did", "delegation_id", "seq");

-- CreateIndex
CREATE INDEX "idempotency_key_created_at_idx" ON "idempotency_key"("created_at");

-- Provenance records are append-only: the database itself refuses to change or remove one.
CREATE FUNCTION "provenance_record_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'provenance records are immutable';
END;
$$;

CREATE TRIGGER "provenance_record_no_update" BEFORE UPDATE OR DELETE ON "provenance_record"
    FOR EACH ROW EXECUTE FUNCTION "provenance_record_immutable"();

CREATE TRIGGER "provenance_record_no_truncate" BEFORE TRUNCATE ON "provenance_record"
    FOR EACH STATEMENT EXECUTE FUNCTION "provenance_record_immutable"();
