import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP relay in front of a PostgreSQL server (no TLS) that counts and times what its clients ask: each
 * simple Query ('Q') and each Sync ('S', the end of an extended-protocol request such as `pg`'s parameterised query)
 * is one round trip, answered when the server says ReadyForQuery ('Z'). Pointed at by one node's MNEMO_DATABASE_URL,
 * it tells that node's round trips per search and what each cost; the relay adds a hop, so throughput is measured
 * without it.
 */
export interface RoundTripCounter {
  /** The database URL with host and port replaced by the relay's. */
  url: string;
  /** So far, by statement (the SQL of the round trip's last Query or Parse, whitespace collapsed): round trips and ms from request to ReadyForQuery. */
  statements(): Map<string, RoundTripStats>;
  stop(): Promise<void>;
}

export interface RoundTripStats { count: number; ms: number }

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/**
 * Splits a protocol stream into typed messages. The frontend's first message (startup, or an SSL/GSS request
 * before it) has no type byte; the backend's messages all have one.
 */
function messageSplitter(untypedFirst: boolean, onMessage: (type: string, message: Buffer) => void) {
  let buffer = Buffer.alloc(0);
  let untyped = untypedFirst;
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (untyped) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        if (buffer.length < length) return;
        const code = buffer.readInt32BE(4);
        untyped = code === SSL_REQUEST || code === GSSENC_REQUEST;
        buffer = buffer.subarray(length);
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer.length < 1 + length) return;
      onMessage(String.fromCharCode(buffer[0]!), buffer.subarray(0, 1 + length));
      buffer = buffer.subarray(1 + length);
    }
  };
}

const cString = (message: Buffer, from: number) => message.toString('utf8', from, message.indexOf(0, from));

export async function startRoundTripCounter(databaseUrl: string): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  const stats = new Map<string, RoundTripStats>();
  const server: Server = createServer((client) => {
    // A `host=/dir` parameter names the server's Unix socket directory (libpq's and `pg`'s convention).
    const socketDir = target.searchParams.get('host');
    const upstream = socketDir?.startsWith('/') ? connect({ path: `${socketDir}/.s.PGSQL.${target.port || 5432}` })
      : connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    // Requests in flight on this connection, oldest first: the server answers them in order.
    const pending: { sql: string; at: number }[] = [];
    let sql = '';
    const fromClient = messageSplitter(true, (type, message) => {
      // Query: its SQL; Parse: the statement's name, then its SQL, each NUL-terminated.
      if (type === 'Q') sql = cString(message, 5);
      if (type === 'P') sql = cString(message, message.indexOf(0, 5) + 1);
      if (type === 'Q' || type === 'S') pending.push({ sql: sql.replace(/\s+/g, ' ').trim(), at: performance.now() });
    });
    const fromServer = messageSplitter(false, (type) => {
      if (type !== 'Z') return;
      const done = pending.shift();
      if (!done) return; // the ReadyForQuery that ends the start-up
      const s = stats.get(done.sql) ?? { count: 0, ms: 0 };
      stats.set(done.sql, { count: s.count + 1, ms: s.ms + performance.now() - done.at });
    });
    client.on('data', (chunk: Buffer) => { fromClient(chunk); upstream.write(chunk); });
    upstream.on('data', (chunk: Buffer) => { fromServer(chunk); client.write(chunk); });
    const close = () => { client.destroy(); upstream.destroy(); sockets.delete(client); sockets.delete(upstream); };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(databaseUrl);
  relayed.hostname = '127.0.0.1';
  relayed.searchParams.delete('host');
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    statements: () => new Map([...stats].map(([k, v]) => [k, { ...v }])),
    stop: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** What was asked between two readings of `statements()`, by statement. */
export function roundTripsBetween(before: Map<string, RoundTripStats>, after: Map<string, RoundTripStats>): Map<string, RoundTripStats> {
  const out = new Map<string, RoundTripStats>();
  for (const [sql, a] of after) {
    const b = before.get(sql) ?? { count: 0, ms: 0 };
    if (a.count > b.count) out.set(sql, { count: a.count - b.count, ms: a.ms - b.ms });
  }
  return out;
}
