import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { DEFAULT_WORKSPACE, workspaceProblem } from '../core/scope.ts';
import { isDomainError } from '../core/errors.ts';
import { createMnemoMcpServer } from '../mcp/mcp-server.ts';
import { keySession } from '../mcp/session.ts';
import { CliError, stderrWarnings, type CliIo } from './cli-store.ts';
import { loadConfig, redactPassword } from './config.ts';
import { MCP_API_KEY_ENV } from './mcp-env.ts';
import { createContainer } from './container.ts';
import { mcpDeps } from './mcp-deps.ts';
import { VERSION } from './version.ts';

/**
 * `mnemo mcp`: the MCP server over stdio, for a client that starts it as a subprocess (Claude Desktop and the like).
 * It opens the configured store as the other commands do (beside a running server on the same data directory:
 * SQLite in WAL mode, or PostgreSQL), with the embedding model of the configuration, and serves until its stdin
 * closes or it gets SIGINT / SIGTERM. The key is checked once at start (a bad one exits 1 at once) and again on
 * every call. Nothing but MCP goes to stdout; notes go to stderr.
 */
export async function serveMcpStdio(io: CliIo, options: { workspace?: string | undefined }, stdio: {
  stdin: NodeJS.ReadableStream; onSignal: (signal: NodeJS.Signals, fn: () => void) => void;
} = { stdin: process.stdin, onSignal: (signal, fn) => process.once(signal, fn) }): Promise<void> {
  const key = io.env[MCP_API_KEY_ENV]?.trim();
  if (!key) throw new CliError(`${MCP_API_KEY_ENV} is not set: give the MCP server an API key (mnemo keys create)`);
  const workspace = options.workspace ?? DEFAULT_WORKSPACE;
  const problem = workspaceProblem(workspace, '--workspace');
  if (problem) throw new CliError(`--workspace ${problem.message}`);
  const config = loadConfig(io.env);
  const container = await createContainer(config);
  // Stdout carries MCP only: warnings (those held since the store opened, and later ones) go to stderr.
  container.warnings.attach(stderrWarnings(io));
  try {
    const session = keySession(container, key, { defaultWorkspace: workspace, userAgent: 'mnemo-mcp-stdio' });
    let who: string;
    try {
      const principal = await container.apiKeys.authenticate(key);
      who = `tenant ${principal.tenantId}, user ${principal.userId}, ${principal.mode}`;
    } catch (err) {
      throw new CliError(`${MCP_API_KEY_ENV}: ${isDomainError(err) ? err.message : String(err)}`);
    }
    io.err(`mnemo: MCP server on stdio (${who}, workspace ${workspace}; database ${config.databaseUrl === null ? config.databaseFile : redactPassword(config.databaseUrl)})\n`);
    const handle = serveStdio(() => createMnemoMcpServer(mcpDeps(container), session, { version: VERSION }), {
      onerror: (err) => io.err(`mnemo: MCP: ${err.message}\n`),
    });
    await new Promise<void>((resolve) => {
      stdio.stdin.once('end', resolve);
      stdio.stdin.once('close', resolve);
      stdio.onSignal('SIGINT', resolve);
      stdio.onSignal('SIGTERM', resolve);
    });
    await handle.close();
  } finally {
    await container.close();
  }
}
