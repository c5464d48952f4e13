import { existsSync } from 'node:fs';
import type { Storage } from '../core/storage.port.ts';
import type { WarningLog } from '../core/warning-log.ts';
import { loadConfig, redactPassword, type Config } from './config.ts';
import { createStorage } from './storage.factory.ts';

/** Where the CLI reads its configuration and writes its output: the process's, or a test's. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** The process's own stderr: progress may be drawn as a bar there (when it is a terminal). */
  terminal?: boolean;
  /** The file descriptor `out` writes to, when it has one (the process's stdout): `mnemo export` makes a file there private. */
  outFd?: number;
}

/** Warnings for the operator (a store file others can read) as `mnemo: warning: …` lines on stderr. */
export const stderrWarnings = (io: CliIo): WarningLog => ({ warn: (_details, message) => io.err(`mnemo: warning: ${message}\n`) });

/** A failure the CLI reports as `mnemo: <message>` with exit code 1 (bad configuration, missing database). */
export class CliError extends Error {}

/**
 * Opens the configured store for one command: no model is loaded, and it works while a server runs on the same data.
 * It says on stderr which database it used, because a CLI and a server on different MNEMO_DATA_DIRs is the usual
 * reason for a key that "does not work". `existing`: refuse to create an empty SQLite database.
 */
export async function withStore<T>(io: CliIo, access: 'create' | 'existing', fn: (storage: Storage, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const { databaseFile } = config;
  if (config.databaseUrl === null && access === 'existing' && !existsSync(databaseFile)) {
    throw new CliError(`no database at ${databaseFile}: point MNEMO_DATA_DIR at the server's data directory`);
  }
  io.err(`mnemo: database ${config.databaseUrl === null ? databaseFile : redactPassword(config.databaseUrl)}\n`);
  const storage = await createStorage(config, stderrWarnings(io));
  try {
    return await fn(storage, config);
  } finally {
    await storage.close();
  }
}
