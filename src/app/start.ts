import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from './config.ts';
import type { Container } from './container.ts';
import { warmUp } from './embedder.factory.ts';

export interface Running {
  app: FastifyInstance;
  container: Container;
  url: string;
  stop(): Promise<void>;
}

/** Builds and starts the server; prints the operator contract's `listening on` line once it accepts requests. */
export async function startServer(config: Config): Promise<Running> {
  // Imported here, not at the top: a start that stops on bad configuration (main, below) loads neither the services
  // nor the HTTP stack.
  const { createContainer } = await import('./container.ts');
  const container = await createContainer(config);
  // Vectors start loading now (big workspaces in worker threads), while the routes compile and the server starts to
  // listen, so that the first search finds them loaded or nearly; a failure is logged once the logger exists.
  const warming = container.storage.warmUp().then(() => null, (err: unknown) => err);
  let app: FastifyInstance;
  try {
    // The HTTP stack (Fastify, every surface, the dashboard) once the store and the master key have opened: a start
    // that stops on a wrong master key or an exposed store file does not load it.
    const { buildServer } = await import('./server.ts');
    app = await buildServer(container, { logLevel: config.logLevel });
    void warming.then((err) => { if (err) app.log.warn({ err }, 'warming the search cache failed'); });
    await warmUp(container.embedder);
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await container.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  process.stdout.write(`listening on ${url}\n`);
  // system.health, analytics.update and event pruning run in the server process only (not in the CLI).
  container.periodic.start((what, err) => app.log.warn({ err }, `${what} failed`));
  // Webhook deliveries too; container.close() stops them (waiting for in-flight attempts) before closing storage.
  container.deliveries.start({ logger: app.log });
  // Ingestion jobs too (docs/ingestion.md); container.close() aborts those in flight, whose leases then lapse.
  container.ingestionWorker.start({ logger: app.log });
  let stopping: Promise<void> | null = null;
  return {
    app,
    container,
    url,
    stop: () => (stopping ??= (async () => {
      await container.periodic.stop();
      // app.close() first tells open streams (CONNECTION_ERROR frames, WebSocket close 1001), then waits for requests.
      await app.close();
      await container.close();
    })()),
  };
}

/** `npm start`: start, then stop gracefully on SIGTERM / SIGINT. Exits 1 with a clear message on bad config. */
export async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mnemo: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  let running: Running;
  try {
    running = await startServer(config);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use (PORT)`
      : e.code === 'EACCES' ? `not allowed to listen on ${config.host}:${config.port} (HOST/PORT)`
      : e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' ? `cannot listen on host ${config.host} (HOST)`
      : e.message;
    process.stderr.write(`mnemo: failed to start: ${why}\n`);
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    running.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      process.stderr.write('mnemo: shutdown timed out; exiting\n');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    running.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`mnemo: error during shutdown: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
