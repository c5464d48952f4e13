import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

/** An in-process PostgreSQL with pgvector; starting one takes seconds, so a test file shares one. */
export async function startPglite(): Promise<PGlite> {
  const pglite = await PGlite.create({ extensions: { vector } });
  // In public, before any per-test schema exists, so every schema's search_path finds the type.
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector');
  return pglite;
}

let schemas = 0;
/**
 * Points the shared PGlite at a new, empty schema (a storage migrates it from scratch), as a fresh database would
 * be. PGlite is a single session, even behind pglite-socket, so the search_path holds for every connection until the
 * next call: one storage at a time.
 */
export async function useFreshSchema(pglite: PGlite): Promise<string> {
  const schema = `contract_${schemas++}`;
  await pglite.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}, public`);
  return schema;
}

/**
 * Empties a migrated schema back to what a freshly migrated one holds, in one transaction that touches no other
 * schema: no rows, identities restarted, the audit log's append-only triggers on again (a tampering test lifts them),
 * no per-model vector index (the adapter creates those on first use). Migrating a new schema takes about ten times
 * as long on PGlite, which is why tests reuse schemas; migrating itself is tested on fresh schemas
 * (test/storage/postgres.storage.test.ts, "postgres specifics").
 */
export async function emptySchema(pglite: PGlite, schema: string): Promise<void> {
  await pglite.transaction(async (tx) => {
    const names = async (sql: string) => (await tx.query<{ name: string }>(sql, [schema])).rows.map((r) => `${schema}.${r.name}`);
    const tables = await names("SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_migrations'");
    const sequences = await names('SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1');
    const indexes = await names("SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'memory\\_vectors\\_hnsw\\_%'");
    // Replica mode skips the triggers that refuse to empty audit_logs (as an operator's reset would), and the foreign
    // keys' checks (every table is emptied); DELETE is much cheaper than TRUNCATE on tables this small.
    await tx.exec(`SET LOCAL session_replication_role = replica;
      ${tables.map((t) => `DELETE FROM ${t};`).join('\n')}
      ${sequences.map((q) => `ALTER SEQUENCE ${q} RESTART;`).join('\n')}
      ALTER TABLE ${schema}.audit_logs ENABLE TRIGGER USER;
      ${indexes.map((x) => `DROP INDEX ${x};`).join('\n')}`);
  });
}

/**
 * The contract suites' "fresh, empty store" without migrating a new schema for every test: the first call points the
 * shared PGlite at a new schema, as useFreshSchema does (the first storage opened on it migrates it); each later call
 * empties that schema (emptySchema) and points the PGlite at it again.
 */
export function emptiedSchema(pglite: PGlite): () => Promise<string> {
  let schema: string | undefined;
  return async () => {
    if (schema === undefined) {
      schema = await useFreshSchema(pglite);
      return schema;
    }
    await emptySchema(pglite, schema);
    await pglite.exec(`SET search_path TO ${schema}, public`);
    return schema;
  };
}
