import { createReadStream, existsSync, fchmodSync, fstatSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { permissionVerdict } from '../adapters/storage/file-permissions.ts';
import type { Embedder } from '../core/embeddings/embedder.port.ts';
import {
  EXPORT_FORMAT_VERSION, ExportLineError, memoryLine, parseHeader, parseRecord, topicLine, versionLine, type ExportRecord,
} from '../core/memories/memory-export.ts';
import { ImportLeftOutTopics, ImportTopicCheck, type KnownTopic } from '../core/memories/import-topic-check.ts';
import { matchesScopeFilter, type ImportedMemory, type ScopeFilter } from '../core/memories/memory-maintenance.ts';
import { memoryEmbeddingText } from '../core/memories/memory.service.ts';
import type { Memory, MemoryVersion, StoredVector } from '../core/memories/memory.types.ts';
import type { KeyMode } from '../core/scope.ts';
import type { Storage } from '../core/storage.port.ts';
import { TRANSFER_TABLES, type TransferRow } from '../core/storage-transfer.ts';
import type { Topic } from '../core/topics/topic.types.ts';
import { parseCount, scopeFilterOf, scopeFilterOptions, type ScopeFilterFlags } from './cli-options.ts';
import { lineCountProgress, terminalCountProgress, type CountProgress } from './cli-progress.ts';
import { CliError, withStore, type CliIo } from './cli-store.ts';
import { createEmbedder } from './embedder.factory.ts';

const table = (name: string) => TRANSFER_TABLES.find((t) => t.name === name)!;
const date = (ms: unknown): Date => new Date(ms as number);

const topicOf = (r: TransferRow): Topic => ({
  id: r.id as string, scope: { tenantId: r.tenant_id as string, mode: r.mode as KeyMode, workspace: r.workspace as string },
  name: r.name as string, description: r.description as string | null, parentId: r.parent_id as string | null,
  metadata: r.metadata as Record<string, unknown>, createdAt: date(r.created_at), updatedAt: date(r.updated_at),
  createdBy: r.created_by as string,
});

const memoryOf = (r: TransferRow): Memory => ({
  id: r.id as string, clientId: r.client_id as string | null,
  scope: { tenantId: r.tenant_id as string, mode: r.mode as KeyMode, workspace: r.workspace as string },
  title: r.title as string, content: r.content as string, memoryType: r.memory_type as string, tags: r.tags as string[],
  metadata: r.metadata as Record<string, unknown>, topicId: r.topic_id as string | null, createdAt: date(r.created_at),
  updatedAt: date(r.updated_at), createdBy: r.created_by as string, updatedBy: r.updated_by as string,
  accessCount: r.access_count as number, lastAccessed: r.last_accessed === null ? null : date(r.last_accessed),
  validFrom: date(r.valid_from), validUntil: r.valid_until === null ? null : date(r.valid_until),
  supersededBy: r.superseded_by as string | null, version: r.version as number,
});

const versionOf = (r: TransferRow): MemoryVersion => ({
  memoryId: r.memory_id as string, version: r.version as number, title: r.title as string, content: r.content as string,
  memoryType: r.memory_type as string, tags: r.tags as string[], metadata: r.metadata as Record<string, unknown>,
  topicId: r.topic_id as string | null, validFrom: date(r.valid_from), validUntil: r.valid_until === null ? null : date(r.valid_until),
  writtenAt: date(r.written_at), writtenBy: r.written_by as string, replacedAt: date(r.replaced_at), replacedBy: r.replaced_by as string,
});

/** A kept version as its transfer row (the import loads them as `mnemo migrate` does). */
const versionRow = (scope: { tenantId: string; mode: string; workspace: string }, v: MemoryVersion): TransferRow => ({
  memory_id: v.memoryId, version: v.version, tenant_id: scope.tenantId, mode: scope.mode, workspace: scope.workspace,
  title: v.title, content: v.content, memory_type: v.memoryType, tags: v.tags, metadata: v.metadata, topic_id: v.topicId,
  valid_from: v.validFrom.getTime(), valid_until: v.validUntil === null ? null : v.validUntil.getTime(),
  written_at: v.writtenAt.getTime(), written_by: v.writtenBy, replaced_at: v.replacedAt.getTime(), replaced_by: v.replacedBy,
});

async function progressFor(io: CliIo, label: string, unit: string, enabled: boolean): Promise<CountProgress | null> {
  if (!enabled) return null;
  const lines = lineCountProgress(label, unit, (s) => io.err(s));
  return io.terminal ? terminalCountProgress(label, unit, lines) : lines;
}

/**
 * Writes the header, the topics, then the memories with their vectors (every model's), in store order. Memories and
 * vectors are both read in sequence order, page by page, and joined as they go (the adapter-neutral transfer dump).
 */
async function exportStore(storage: Storage, filter: ScopeFilter, pageSize: number, out: (s: string) => void, progress: CountProgress | null): Promise<number> {
  const scopeOfRow = (r: TransferRow) => ({ tenantId: r.tenant_id as string, mode: r.mode as KeyMode, workspace: r.workspace as string });
  out(`${JSON.stringify({
    mnemo_export: EXPORT_FORMAT_VERSION, exported_at: new Date().toISOString(),
    filter: { tenant: filter.tenantId, mode: filter.mode, workspace: filter.workspace },
  })}\n`);
  for (let after: TransferRow | null = null; ;) {
    const rows = await storage.transfer.dump(table('topics'), after, pageSize);
    if (rows.length === 0) break;
    out(rows.filter((r) => matchesScopeFilter(filter, scopeOfRow(r))).map((r) => `${topicLine(topicOf(r))}\n`).join(''));
    after = rows[rows.length - 1]!;
  }
  const total = (await storage.memories.vectorCoverage(filter)).memories;
  let done = 0;
  progress?.update(0, total);
  const vectorsTable = table('memory_vectors');
  let vectorAfter: TransferRow | null = null;
  let pending: TransferRow[] = [];
  let vectorsDone = false;
  /** Every vector of the memories up to `seq` (vectors come in memory_seq order too). */
  async function vectorsUpTo(seq: number): Promise<Map<number, StoredVector[]>> {
    const bySeq = new Map<number, StoredVector[]>();
    for (;;) {
      while (pending.length > 0 && (pending[0]!.memory_seq as number) <= seq) {
        const v = pending.shift()!;
        const list = bySeq.get(v.memory_seq as number) ?? [];
        list.push({ modelId: v.model_id as string, vector: Float32Array.from(v.vector as number[]) });
        bySeq.set(v.memory_seq as number, list);
      }
      if (pending.length > 0 || vectorsDone) return bySeq;
      pending = await storage.transfer.dump(vectorsTable, vectorAfter, pageSize);
      if (pending.length === 0) vectorsDone = true;
      else vectorAfter = pending[pending.length - 1]!;
    }
  }
  for (let after: TransferRow | null = null; ;) {
    const rows = await storage.transfer.dump(table('memories'), after, pageSize);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!;
    const vectors = await vectorsUpTo(after.seq as number);
    const lines: string[] = [];
    for (const r of rows) {
      if (!matchesScopeFilter(filter, scopeOfRow(r))) continue;
      lines.push(`${memoryLine(memoryOf(r), vectors.get(r.seq as number) ?? [])}\n`);
    }
    out(lines.join(''));
    done += lines.length;
    progress?.update(done, Math.max(total, done));
  }
  // Then every kept earlier version of those memories (their history).
  for (let after: TransferRow | null = null; ;) {
    const rows = await storage.transfer.dump(table('memory_versions'), after, pageSize);
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!;
    out(rows.filter((r) => matchesScopeFilter(filter, scopeOfRow(r))).map((r) => `${versionLine(scopeOfRow(r), versionOf(r))}\n`).join(''));
  }
  return done;
}

/** An export holds memories: a regular file its output is redirected to (`> backup.jsonl`) is made private (0600). */
function makeOutputPrivate(io: CliIo): void {
  if (io.outFd === undefined || process.platform === 'win32') return;
  const stats = fstatSync(io.outFd);
  if (!stats.isFile() || permissionVerdict(stats.mode) === 'ok') return;
  const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');
  try {
    fchmodSync(io.outFd, stats.mode & 0o700);
    io.err(`mnemo: output file made private (mode ${octal(stats.mode)} -> ${octal(stats.mode & 0o700)})\n`);
  } catch (err) {
    io.err(`mnemo: warning: the output file is readable by other users (mode ${octal(stats.mode)}): ${(err as Error).message}\n`);
  }
}

/** Each line of the file after the header, with its number (1-based, as editors count). */
async function* linesOf(file: string): AsyncGenerator<{ n: number; line: string }> {
  const reader = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of reader) {
    n++;
    yield { n, line };
  }
}

/** Every topic of the store, in all scopes (topics are few), for the import's check. */
async function storedTopics(storage: Storage): Promise<KnownTopic[]> {
  const topics: KnownTopic[] = [];
  for (let after: TransferRow | null = null; ;) {
    const rows = await storage.transfer.dump(table('topics'), after, 1000);
    if (rows.length === 0) return topics;
    topics.push(...rows.map(topicOf));
    after = rows[rows.length - 1]!;
  }
}

interface ImportFlags extends ScopeFilterFlags { skipBad?: boolean; batchSize: number; progress: boolean }

/**
 * Pass 1 reads every line and checks it (nothing is written): a bad line (malformed, or a topic the store could not
 * take: ImportTopicCheck) stops the import naming its number, or, with --skip-bad, is reported and left out with what
 * depends on it (ImportLeftOutTopics: memories and sub-topics of a topic left out). Pass 2
 * reads the file again and writes: topics one by one, memories in batches of one transaction each, re-embedding those
 * without a vector of the configured model.
 */
async function importFile(storage: Storage, embedder: Embedder, textOf: (t: string, c: string) => string, file: string,
  flags: ImportFlags, io: CliIo): Promise<string> {
  const filter = scopeFilterOf(flags);
  const bad = new Set<number>();
  let memories = 0;
  // Topic ids are unique in the whole store: a line the write pass could not store is found here (import-topic-check.ts).
  const topics = new ImportTopicCheck(await storedTopics(storage));
  const leftOut = new ImportLeftOutTopics();
  for await (const { n, line } of linesOf(file)) {
    try {
      if (n === 1) { parseHeader(line); continue; }
      if (line.trim() === '') continue;
      const record = parseRecord(line);
      if (record.kind === 'topic') {
        if (!matchesScopeFilter(filter, record.topic.scope)) continue;
        topics.topic(record.topic);
        leftOut.topic(record.topic, n);
      } else if (record.kind === 'version') {
        continue;
      } else if (matchesScopeFilter(filter, record.memory.scope)) {
        topics.memory(record.memory);
        leftOut.memory(record.memory, n);
        memories++;
      }
    } catch (err) {
      if (!(err instanceof ExportLineError)) throw err;
      if (n === 1 || !flags.skipBad) throw new CliError(`${file} line ${n}: ${err.message}; nothing was imported`);
      io.err(`mnemo: ${file} line ${n} skipped: ${err.message}\n`);
      bad.add(n);
      leftOut.leftOutLine(line, n);
    }
  }
  for (const [n, { cause, kind }] of [...leftOut.cascade((id) => topics.has(id))].sort(([a], [b]) => a - b)) {
    io.err(`mnemo: ${file} line ${n} skipped: its ${kind === 'memory' ? 'topic' : 'parent topic'} (line ${cause}) was left out\n`);
    bad.add(n);
    if (kind === 'memory') memories--;
  }
  const progress = await progressFor(io, 'import', 'memories', flags.progress);
  let done = 0;
  let inserted = 0;
  let reembedded = 0;
  let topicsInserted = 0;
  const skipped: string[] = [];
  /** Memories this import wrote, and the kept versions of theirs it found (loaded once they are all in). */
  const written = new Set<string>();
  const versions: TransferRow[] = [];
  let batch: ImportedMemory[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const needs = batch.filter((b) => !b.vectors.some((v) => v.modelId === embedder.modelId && v.vector.length === embedder.dimensions));
    if (needs.length > 0) {
      const vectors = await embedder.embed(needs.map((b) => textOf(b.memory.title, b.memory.content)));
      needs.forEach((b, i) => {
        // A vector named after the configured model but of another width cannot be its: replaced.
        b.vectors = [...b.vectors.filter((v) => v.modelId !== embedder.modelId), { modelId: embedder.modelId, vector: vectors[i]! }];
      });
      reembedded += needs.length;
    }
    const result = await storage.memories.importMemories(batch);
    inserted += result.inserted;
    skipped.push(...result.skipped);
    const notWritten = new Set(result.skipped);
    for (const b of batch) if (!notWritten.has(b.memory.id)) written.add(b.memory.id);
    done += batch.length;
    progress?.update(done, memories);
    batch = [];
  };
  try {
    progress?.update(0, memories);
    for await (const { n, line } of linesOf(file)) {
      if (n === 1 || bad.has(n) || line.trim() === '') continue;
      const record: ExportRecord = parseRecord(line);
      if (record.kind === 'topic') {
        if (!matchesScopeFilter(filter, record.topic.scope)) continue;
        if (await storage.topics.findById(record.topic.scope, record.topic.id)) continue;
        await storage.topics.insert(record.topic);
        topicsInserted++;
        continue;
      }
      if (record.kind === 'version') {
        if (matchesScopeFilter(filter, record.scope)) versions.push(versionRow(record.scope, record.version));
        continue;
      }
      if (!matchesScopeFilter(filter, record.memory.scope)) continue;
      batch.push({ memory: record.memory, vectors: record.vectors });
      if (batch.length >= flags.batchSize) await flush();
    }
    await flush();
    // A memory already stored keeps its own history: only the imported ones get theirs.
    const theirs = versions.filter((v) => written.has(v.memory_id as string));
    for (let i = 0; i < theirs.length; i += flags.batchSize) await storage.transfer.load(table('memory_versions'), theirs.slice(i, i + flags.batchSize));
  } finally {
    progress?.stop();
  }
  for (const id of skipped) io.err(`mnemo: memory ${id} already stored (same id, or same client id in its workspace): left as it is\n`);
  return `imported: ${inserted} memories (${reembedded} embedded with ${embedder.modelId}, the rest with their own vectors), `
    + `${topicsInserted} topics; ${skipped.length} already stored; ${bad.size} bad lines skipped\n`;
}

export function registerExportImportCommands(program: Command, io: CliIo): void {
  scopeFilterOptions(program.command('export'))
    .description('write memories (with metadata, tags, topics, workspaces, times, and their vectors with model ids) as '
      + 'JSONL on stdout: mnemo export > backup.jsonl. Format: docs/operations.md. Progress on stderr.')
    .option('--page-size <rows>', 'rows read at a time', parseCount, 500)
    .option('--no-progress', 'no progress on stderr')
    .action(async (opts: ScopeFilterFlags & { pageSize: number; progress: boolean }) => {
      await withStore(io, 'existing', async (storage) => {
        makeOutputPrivate(io);
        const progress = await progressFor(io, 'export', 'memories', opts.progress);
        try {
          const n = await exportStore(storage, scopeFilterOf(opts), opts.pageSize, (s) => io.out(s), progress);
          progress?.stop();
          io.err(`mnemo: exported ${n} memories\n`);
        } catch (err) {
          progress?.stop();
          throw err;
        }
      });
    });

  scopeFilterOptions(program.command('import'))
    .description('load a file written by mnemo export. Memories keep their ids, times and counters; vectors of the '
      + 'configured model are reused, other memories are embedded again (vectors of other models are kept too). The '
      + 'whole file is checked first: a bad line stops the import before anything is written, naming the line. Memories '
      + 'already stored (same id) are left as they are, so an interrupted import is finished by running it again. '
      + 'No events or webhooks are sent.')
    .argument('<file>', 'the JSONL file (read twice: checked, then written)')
    .option('--skip-bad', 'leave out bad lines (each reported on stderr with its number) instead of stopping')
    .option('--batch-size <n>', 'memories per transaction (and per embedder call)', parseCount, 100)
    .option('--no-progress', 'no progress on stderr')
    .action(async (file: string, opts: ImportFlags) => {
      if (!existsSync(file)) throw new CliError(`no file ${file}`);
      await withStore(io, 'create', async (storage, config) => {
        const embedder = createEmbedder(config.embeddings);
        try {
          io.out(await importFile(storage, embedder, (t, c) => memoryEmbeddingText(t, c, config.maxEmbedChars), file, opts, io));
        } finally {
          await embedder.close();
        }
      });
    });
}
