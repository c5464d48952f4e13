import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An in-process PostgreSQL with pgvector; starting one takes seconds (over ten on a loaded 2-core machine). Most of
 * that is initdb: a new PGlite's data directory is made once and kept (dataDirDump), and the next ones start from
 * a copy of it, as a restored backup would (about a third of the CPU time of a start with initdb).
 */
export async function startPglite(): Promise<PGlite> {
  const dump = readDataDirDump();
  if (dump) {
    try {
      return await withVector(await PGlite.create({ extensions: { vector }, loadDataDir: new Blob([dump]) }));
    } catch {
      // Unreadable (cut short, another build's): started afresh below, and written again.
    }
  }
  const pglite = await withVector(await PGlite.create({ extensions: { vector } }));
  await writeDataDirDump(pglite);
  return pglite;
}

/** In public, before any per-test schema exists, so every schema's search_path finds the type. */
async function withVector(pglite: PGlite): Promise<PGlite> {
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector');
  return pglite;
}

/**
 * Where a fresh PGlite's data directory (initdb done, pgvector created, nothing else) is kept, as PGlite's own dump
 * (a tar file): in node_modules/.cache, so that it goes with the installed packages, under a name of their versions.
 */
const root = join(import.meta.dirname, '..', '..');
const versionOf = (pkg: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
const dataDirDump = (): string => join(root, 'node_modules', '.cache', 'mnemo-test',
  `pglite-${versionOf('@electric-sql/pglite')}-pgvector-${versionOf('@electric-sql/pglite-pgvector')}.tar`);

function readDataDirDump(): Buffer | undefined {
  try {
    return readFileSync(dataDirDump());
  } catch {
    return undefined;
  }
}

/** Dumps a PGlite just started: a checkpoint first, so that the copy starts without replaying WAL. Best effort. */
async function writeDataDirDump(pglite: PGlite): Promise<void> {
  let file: string | undefined;
  let partial: string | undefined;
  try {
    file = dataDirDump();
    partial = `${file}.${process.pid}.partial`;
    await pglite.exec('CHECKPOINT');
    const tar = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(partial, tar);
    // Whole or not at all, for the processes reading it meanwhile (two workers may both write it: same content).
    renameSync(partial, file);
  } catch {
    if (partial) rmSync(partial, { force: true });
  }
}

interface WorkerState {
  pglite: Promise<PGlite> | undefined;
  /** Schemas made so far in this process: each name is used once. */
  schemasMade: number;
  /** The schemas made for the file now running (fileDatabase, useFreshSchema), dropped when it releases its database. */
  fileSchemas: string[] | undefined;
}
// On globalThis rather than in this module: a file that resets the module registry still finds the process's PGlite.
const KEY = Symbol.for('mnemo.test.workerPglite');
const state = ((globalThis as Record<symbol, unknown>)[KEY] ??= { pglite: undefined, schemasMade: 0, fileSchemas: undefined }) as WorkerState;

/**
 * This process's PGlite, started on first use and kept until the process ends. The files of a vitest worker share its
 * process (`isolate: false` in vitest.config.ts) and so this one database: each file works in schemas of its own
 * (fileDatabase, useFreshSchema), the `postgres` project's apps too (test/support/test-store.ts).
 */
export function workerPglite(): Promise<PGlite> {
  // A start that failed is not kept: the next file tries again (and fails with its own error if it must).
  state.pglite ??= startPglite().catch((err: unknown) => {
    state.pglite = undefined;
    throw err;
  });
  return state.pglite;
}

const newSchemaName = (prefix: string): string => `${prefix}_${state.schemasMade++}`;

/** One test file's database on the worker's PGlite: what a new, empty PostgreSQL database would be. */
export interface FileDatabase {
  pglite: PGlite;
  schema: string;
  /** Drops the file's schemas and points the session back at `public`; in the file's afterAll, after its servers stopped. */
  release(): Promise<void>;
}

/**
 * A new, empty schema of the worker's PGlite made the session's search_path: PGlite is one session, so every statement
 * of the file (its own, a storage's, and those of the `pg` connections servePglite serves, which share that session)
 * lands in it until release(). Tables, sequences and indexes made by a migration go to the first schema of the path;
 * the pgvector extension stays in `public`, installed once per PGlite. A file that ran before leaves nothing behind:
 * release() drops every schema the file made (this one and useFreshSchema's).
 */
export async function fileDatabase(): Promise<FileDatabase> {
  const pglite = await workerPglite();
  const schema = newSchemaName('file');
  (state.fileSchemas ??= []).push(schema);
  await pglite.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}, public`);
  return {
    pglite,
    schema,
    async release() {
      const made = state.fileSchemas ?? [];
      state.fileSchemas = undefined;
      // The statements the file's `pg` connections prepared (pg-prepared-statements.ts) live in the shared session.
      await pglite.exec(`DEALLOCATE ALL; SET search_path TO public; ${made.map((s) => `DROP SCHEMA IF EXISTS ${s} CASCADE;`).join('\n')}`);
    },
  };
}

/**
 * Points the PGlite at a new, empty schema (a storage migrates it from scratch), as a fresh database would be. PGlite
 * is a single session, even behind pglite-socket, so the search_path holds for every connection until the next call:
 * one storage at a time. Dropped with the file's database (fileDatabase) when there is one.
 */
export async function useFreshSchema(pglite: PGlite): Promise<string> {
  const schema = newSchemaName('contract');
  state.fileSchemas?.push(schema);
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
