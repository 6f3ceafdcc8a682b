import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { database, type Database } from "@/server/db/client";

/**
 * The migrated database must be exactly what prisma/schema/ describes: the same tables,
 * columns (type, nullability, whether they have a default), primary keys, indexes and foreign
 * keys. Migrations are written by hand (see prisma/migrations/<provider>/), so this is what
 * catches a model changed without its migration, or a migration that says something else.
 * Prisma's generated clients do not carry the full data model at run time, so the schema file
 * is read directly; it uses only the small subset of Prisma's language parsed here.
 */

interface Column {
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}
interface Index {
  columns: string[];
  unique: boolean;
}
interface ForeignKey {
  columns: string[];
  table: string;
  references: string[];
  onDelete: string;
  onUpdate: string;
}
interface Table {
  columns: Record<string, Column>;
  primaryKey: string[];
  indexes: Record<string, Index>;
  foreignKeys: ForeignKey[];
}

const SCALARS: Record<string, { sqlite: string; postgresql: string }> = {
  String: { sqlite: "TEXT", postgresql: "text" },
  Int: { sqlite: "INTEGER", postgresql: "integer" },
  BigInt: { sqlite: "BIGINT", postgresql: "bigint" },
  Boolean: { sqlite: "BOOLEAN", postgresql: "boolean" },
  DateTime: { sqlite: "DATETIME", postgresql: "timestamp without time zone" },
  Json: { sqlite: "TEXT", postgresql: "jsonb" },
  Bytes: { sqlite: "BLOB", postgresql: "bytea" },
  Float: { sqlite: "REAL", postgresql: "double precision" },
};

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
const sortFks = (fks: ForeignKey[]) => [...fks].sort((a, b) => a.columns.join().localeCompare(b.columns.join()));

/** The tables prisma/schema/ describes, as the engine should have them. */
function expectedTables(engine: Database["engine"]): Record<string, Table> {
  const dir = join(process.cwd(), "prisma/schema");
  const source = readdirSync(dir)
    .filter((f) => f.endsWith(".prisma"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n")
    .replace(/\/\/.*$/gm, "");
  const models = [...source.matchAll(/^model (\w+) \{([^}]*)\}/gm)].map((m) => ({ name: m[1]!, body: m[2]! }));
  const tableOf = (model: string) => {
    const body = models.find((m) => m.name === model)!.body;
    return /@@map\("(\w+)"\)/.exec(body)?.[1] ?? model;
  };
  const tables: Record<string, Table> = {};
  for (const model of models) {
    const table = tableOf(model.name);
    const columnOf: Record<string, string> = {};
    const t: Table = { columns: {}, primaryKey: [], indexes: {}, foreignKeys: [] };
    const lines = model.body
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    for (const line of lines.filter((l) => !l.startsWith("@@"))) {
      const [, field, type, modifier, attributes = ""] = /^(\w+)\s+(\w+)(\?|\[\])?\s*(.*)$/.exec(line)!;
      if (SCALARS[type!]) {
        const column = /@map\("(\w+)"\)/.exec(attributes)?.[1] ?? field!;
        columnOf[field!] = column;
        t.columns[column] = {
          type: SCALARS[type!]![engine],
          nullable: modifier === "?",
          hasDefault: attributes.includes("@default("),
        };
      }
    }
    for (const line of lines) {
      const [, field, type, modifier, attributes = ""] = /^(\w+)\s+(\w+)(\?|\[\])?\s*(.*)$/.exec(line) ?? [];
      if (field && SCALARS[type!] && /@id\b/.test(attributes)) t.primaryKey = [columnOf[field]!];
      if (field && SCALARS[type!] && /@unique\b/.test(attributes))
        t.indexes[`${table}_${columnOf[field]}_key`] = { columns: [columnOf[field]!], unique: true };
      const relation = /@relation\((.*)\)/.exec(attributes)?.[1];
      if (field && !SCALARS[type!] && relation?.includes("fields:")) {
        const fields = list(/fields: \[([^\]]*)\]/.exec(relation)![1]!);
        const actions: Record<string, string> = {
          Restrict: "RESTRICT",
          Cascade: "CASCADE",
          SetNull: "SET NULL",
          NoAction: "NO ACTION",
          SetDefault: "SET DEFAULT",
        };
        t.foreignKeys.push({
          columns: fields.map((f) => columnOf[f]!),
          table: tableOf(type!),
          references: list(/references: \[([^\]]*)\]/.exec(relation)![1]!),
          // Prisma's defaults: a required relation restricts deletes, an optional one nulls the key.
          onDelete:
            actions[/onDelete: (\w+)/.exec(relation)?.[1] ?? ""] ?? (modifier === "?" ? "SET NULL" : "RESTRICT"),
          onUpdate: actions[/onUpdate: (\w+)/.exec(relation)?.[1] ?? ""] ?? "CASCADE",
        });
      }
      const block = /^@@(id|unique|index)\(\[([^\]]*)\]/.exec(line);
      if (block) {
        const columns = list(block[2]!).map((f) => columnOf[f]!);
        if (block[1] === "id") t.primaryKey = columns;
        else
          // An explicit `map: "<name>"` names the index; else Prisma's default name.
          t.indexes[
            /map: "(\w+)"/.exec(line)?.[1] ?? `${table}_${columns.join("_")}_${block[1] === "unique" ? "key" : "idx"}`
          ] = {
            columns,
            unique: block[1] === "unique",
          };
      }
    }
    // The referenced side of a relation is given in fields' names: turn them into columns.
    tables[table] = t;
  }
  for (const t of Object.values(tables)) {
    for (const fk of t.foreignKeys) {
      const model = models.find((m) => tableOf(m.name) === fk.table)!;
      fk.references = fk.references.map(
        (f) =>
          /^\s*(\w+)\s+\w+\??\s+.*@map\("(\w+)"\)/m.exec(
            model.body.split("\n").find((l) => l.trim().startsWith(`${f} `)) ?? "",
          )?.[2] ?? f,
      );
    }
    t.foreignKeys = sortFks(t.foreignKeys);
  }
  return tables;
}

/** The tables the migrated database has, read from its catalogue. */
async function actualTables(db: Database): Promise<Record<string, Table>> {
  const tables: Record<string, Table> = {};
  if (db.engine === "sqlite") {
    const names = await db.raw.query<{ name: string }>(
      `SELECT "name" FROM "sqlite_master" WHERE "type" = 'table' AND "name" NOT LIKE 'sqlite_%' AND "name" <> '_prisma_migrations'`,
    );
    for (const { name } of names) {
      const columns = await db.raw.query<{
        name: string;
        type: string;
        notnull: number;
        dflt_value: string | null;
        pk: number;
      }>(`SELECT * FROM pragma_table_info('${name}')`);
      const indexes = await db.raw.query<{ name: string; unique: number; origin: string }>(
        `SELECT * FROM pragma_index_list('${name}')`,
      );
      const fks = await db.raw.query<{
        id: number;
        table: string;
        from: string;
        to: string;
        on_update: string;
        on_delete: string;
      }>(`SELECT * FROM pragma_foreign_key_list('${name}') ORDER BY "id", "seq"`);
      const t: Table = {
        columns: Object.fromEntries(
          columns.map((c) => [
            c.name,
            { type: c.type, nullable: c.notnull === 0 && c.pk === 0, hasDefault: c.dflt_value !== null },
          ]),
        ),
        primaryKey: columns
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
        indexes: {},
        foreignKeys: [],
      };
      for (const index of indexes.filter((i) => i.origin !== "pk")) {
        const cols = await db.raw.query<{ name: string }>(
          `SELECT "name" FROM pragma_index_info('${index.name}') ORDER BY "seqno"`,
        );
        t.indexes[index.name] = { columns: cols.map((c) => c.name), unique: index.unique === 1 };
      }
      const byId = new Map<number, ForeignKey>();
      for (const fk of fks) {
        const entry = byId.get(fk.id) ?? {
          columns: [],
          table: fk.table,
          references: [],
          onDelete: fk.on_delete,
          onUpdate: fk.on_update,
        };
        entry.columns.push(fk.from);
        entry.references.push(fk.to);
        byId.set(fk.id, entry);
      }
      t.foreignKeys = sortFks([...byId.values()]);
      tables[name] = t;
    }
    return tables;
  }
  const columns = await db.raw.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>(
    `SELECT "table_name", "column_name", "data_type", "is_nullable", "column_default" FROM information_schema.columns WHERE "table_schema" = current_schema() AND "table_name" <> '_prisma_migrations'`,
  );
  for (const c of columns) {
    tables[c.table_name] ??= { columns: {}, primaryKey: [], indexes: {}, foreignKeys: [] };
    tables[c.table_name]!.columns[c.column_name] = {
      type: c.data_type,
      nullable: c.is_nullable === "YES",
      hasDefault: c.column_default !== null,
    };
  }
  const indexes = await db.raw.query<{
    table: string;
    name: string;
    unique: boolean;
    primary: boolean;
    columns: string[];
  }>(
    `SELECT t.relname AS "table", i.relname AS "name", ix.indisunique AS "unique", ix.indisprimary AS "primary",
            array_agg(a.attname::text ORDER BY k.ord) AS "columns"
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE n.nspname = current_schema() AND t.relname <> '_prisma_migrations'
      GROUP BY t.relname, i.relname, ix.indisunique, ix.indisprimary`,
  );
  for (const index of indexes) {
    const t = tables[index.table]!;
    if (index.primary) t.primaryKey = index.columns;
    else t.indexes[index.name] = { columns: index.columns, unique: index.unique };
  }
  const actions: Record<string, string> = {
    r: "RESTRICT",
    c: "CASCADE",
    n: "SET NULL",
    a: "NO ACTION",
    d: "SET DEFAULT",
  };
  const fks = await db.raw.query<{
    table: string;
    references_table: string;
    columns: string[];
    references: string[];
    on_delete: string;
    on_update: string;
  }>(
    `SELECT t.relname AS "table", r.relname AS "references_table", c.confdeltype::text AS "on_delete", c.confupdtype::text AS "on_update",
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o) AS "columns",
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o) AS "references"
       FROM pg_constraint c
       JOIN pg_class t ON t.oid = c.conrelid
       JOIN pg_class r ON r.oid = c.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema()`,
  );
  for (const fk of fks) {
    tables[fk.table]!.foreignKeys.push({
      columns: fk.columns,
      table: fk.references_table,
      references: fk.references,
      onDelete: actions[fk.on_delete]!,
      onUpdate: actions[fk.on_update]!,
    });
  }
  for (const t of Object.values(tables)) t.foreignKeys = sortFks(t.foreignKeys);
  return tables;
}

describe("the migrated database matches the models in prisma/schema/", () => {
  it("has the same tables, columns, primary keys, indexes and foreign keys", async () => {
    const db = await database();
    const expected = expectedTables(db.engine);
    const actual = await actualTables(db);
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, table] of Object.entries(expected)) {
      // One table at a time, so a failure names the table that drifted.
      expect({ table: name, ...actual[name] }).toEqual({ table: name, ...table });
    }
  });

  it("enforces the foreign keys: a passport of an organization that does not exist is refused", async () => {
    const db = await database();
    await expect(
      db.writeTx((tx) =>
        tx.passport.create({
          data: { did: "did:key:zOrphan", type: "agent", name: "orphan", orgDid: "did:svc:nowhere", publicKeyJwk: {} },
        }),
      ),
    ).rejects.toThrow();
    await expect(
      db.writeTx((tx) =>
        tx.delegation.create({
          data: {
            id: "dlg_orphan",
            orgDid: "did:svc:nowhere",
            kind: "api_key",
            grantorDid: "x",
            delegateDid: "x",
            capabilities: [],
            expiresAt: new Date(),
          },
        }),
      ),
    ).rejects.toThrow();
  });
});
