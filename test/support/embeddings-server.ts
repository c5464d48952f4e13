import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createOpenAiEmbedder } from '../../src/adapters/embeddings/openai.embedder.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';

/**
 * An OpenAI-compatible embeddings provider on loopback (the remote service Mnemo would call), answering with the
 * hashing embedder's vectors. Tests steer it: fail the next N requests with 500, or answer after a delay.
 */
export interface EmbeddingsServer {
  embedder: Embedder;
  /** Its base URL (`http://127.0.0.1:port/v1`), for MNEMO_EMBEDDINGS_URL. */
  url: string;
  failNext(n: number): void;
  setDelay(ms: number): void;
  requests(): number;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(dims = 64): Promise<EmbeddingsServer> {
  let failures = 0;
  let delay = 0;
  let count = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => { raw += c.toString(); });
    req.on('end', () => {
      count++;
      const respond = () => {
        if (failures > 0) {
          failures--;
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"temporarily unavailable"}}');
          return;
        }
        const body = JSON.parse(raw) as { model: string; input: string[] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          object: 'list', model: body.model,
          data: body.input.map((text, index) => ({ object: 'embedding', index, embedding: Array.from(hashEmbed(text, dims)) })),
        }));
      };
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    // No adapter-level retries: the tests decide what is retried.
    embedder: createOpenAiEmbedder({ url, model: 'test-model', dimensions: dims, maxRetries: 0 }),
    failNext: (n) => { failures = n; },
    setDelay: (ms) => { delay = ms; },
    requests: () => count,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
