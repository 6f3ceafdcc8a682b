-- CreateTable
CREATE TABLE "merkle_node" (
    "level" INTEGER NOT NULL,
    "idx" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,

    CONSTRAINT "merkle_node_pkey" PRIMARY KEY ("level","idx")
);

-- CreateTable
CREATE TABLE "ledger_checkpoint" (
    "tree_size" BIGINT NOT NULL,
    "root_hash" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ledger_checkpoint_pkey" PRIMARY KEY ("tree_size")
);

-- CreateTable
CREATE TABLE "ledger_cosignature" (
    "id" TEXT NOT NULL,
    "tree_size" BIGINT NOT NULL,
    "witness" TEXT NOT NULL,
    "line" TEXT NOT NULL,
    "signed_at" BIGINT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ledger_cosignature_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ledger_cosignature_tree_size_witness_key" ON "ledger_cosignature"("tree_size", "witness");

-- CreateIndex
CREATE INDEX "ledger_cosignature_witness_created_at_idx" ON "ledger_cosignature"("witness", "created_at");

-- The tree and its signed heads are append-only, like the records they cover.
CREATE TRIGGER "merkle_node_no_update" BEFORE UPDATE OR DELETE ON "merkle_node"
    FOR EACH ROW EXECUTE FUNCTION "provenance_record_immutable"();
CREATE TRIGGER "merkle_node_no_truncate" BEFORE TRUNCATE ON "merkle_node"
    FOR EACH STATEMENT EXECUTE FUNCTION "provenance_record_immutable"();
CREATE TRIGGER "ledger_checkpoint_no_update" BEFORE UPDATE OR DELETE ON "ledger_checkpoint"
    FOR EACH ROW EXECUTE FUNCTION "provenance_record_immutable"();
CREATE TRIGGER "ledger_checkpoint_no_truncate" BEFORE TRUNCATE ON "ledger_checkpoint"
    FOR EACH STATEMENT EXECUTE FUNCTION "provenance_record_immutable"();
