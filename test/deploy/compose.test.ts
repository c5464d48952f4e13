import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES } from '../../src/app/config.ts';

/**
 * deploy/compose.yaml cannot run here (no container runtime), so this checks what can be checked without one: it is
 * valid YAML of the expected shape, on the images docs/deploy.md names, and every variable it gives the Mnemo nodes
 * is one src/app/config.ts reads (a misspelt name would be silently ignored at start).
 */
const root = new URL('../../deploy/', import.meta.url);
const compose = parse(readFileSync(new URL('compose.yaml', root), 'utf8')) as {
  services: Record<string, { image?: string; build?: { dockerfile?: string }; environment?: Record<string, string> }>;
};

describe('deploy/compose.yaml', () => {
  const nodes = Object.entries(compose.services).filter(([, s]) => s.build?.dockerfile === 'deploy/Dockerfile');

  it('runs two Mnemo nodes on pgvector and Redis behind a load balancer', () => {
    expect(nodes.map(([name]) => name)).toEqual(['mnemo-1', 'mnemo-2']);
    expect(compose.services.postgres?.image).toBe('pgvector/pgvector:pg17');
    expect(compose.services.redis?.image).toBe('redis:7');
    expect(compose.services.lb?.image).toMatch(/^nginx:/);
  });

  it('gives the nodes only variables Mnemo reads, and points them at the shared stores', () => {
    const known = new Set<string>(CONFIG_VARIABLES);
    for (const [name, node] of nodes) {
      const env = node.environment ?? {};
      expect(Object.keys(env).filter((v) => !known.has(v)), name).toEqual([]);
      expect(env.MNEMO_DATABASE_URL, name).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
      expect(env.MNEMO_REDIS_URL, name).toBe('redis://redis:6379');
    }
  });

  it('has an nginx configuration that streams SSE unbuffered with long timeouts to both nodes', () => {
    const nginx = readFileSync(new URL('nginx.conf', root), 'utf8');
    for (const [name] of nodes) expect(nginx).toContain(`server ${name}:8080`);
    expect(nginx).toMatch(/^\s*proxy_buffering off;/m);
    const readTimeout = /^\s*proxy_read_timeout (\d+)h;/m.exec(nginx);
    expect(Number(readTimeout?.[1])).toBeGreaterThanOrEqual(1);
  });
});
