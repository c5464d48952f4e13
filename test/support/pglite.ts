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
