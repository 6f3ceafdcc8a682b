-- CreateTable
CREATE TABLE "merkle_node" (
    "level" INTEGER NOT NULL,
    "idx" BIGINT NOT NULL,
    "hash" BLOB NOT NULL,

    PRIMARY KEY ("level", "idx")
);

-- CreateTable
CREATE TABLE "ledger_checkpoint" (
    "tree_size" BIGINT NOT NULL PRIMARY KEY,
    "root_hash" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ledger_cosignature" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tree_size" BIGINT NOT NULL,
    "witness" TEXT NOT NULL,
    "line" TEXT NOT NULL,
    "signed_at" BIGINT NOT NULL,
    "created_at" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "ledger_cosignature_tree_size_witness_key" ON "ledger_cosignature"("tree_size", "witness");

-- CreateIndex
CREATE INDEX "ledger_cosignature_witness_created_at_idx" ON "ledger_cosignature"("witness", "created_at");

-- The tree and its signed heads are append-only, like the records they cover.
CREATE TRIGGER "merkle_node_no_update" BEFORE UPDATE ON "merkle_node" BEGIN SELECT RAISE(ABORT, 'ledger nodes are immutable'); END;
CREATE TRIGGER "merkle_node_no_delete" BEFORE DELETE ON "merkle_node" BEGIN SELECT RAISE(ABORT, 'ledger nodes are immutable'); END;
CREATE TRIGGER "ledger_checkpoint_no_update" BEFORE UPDATE ON "ledger_checkpoint" BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;
CREATE TRIGGER "ledger_checkpoint_no_delete" BEFORE DELETE ON "ledger_checkpoint" BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;
