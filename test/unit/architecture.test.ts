import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
}

/** docs/architecture.md "Layers": core -> nothing outside core; surfaces never import each other. */
describe('architecture', () => {
  const INFRA = /^(fastify|@fastify\/|better-sqlite3$|pg$|ioredis$|ws$|pino$|typebox$|ajv)/;

  it('keeps the core free of HTTP, drivers, adapters and surfaces', () => {
    const offenders: string[] = [];
    for (const file of tsFiles(join(root, 'src', 'core'))) {
      for (const spec of importsOf(file)) {
        const leavesCore = spec.startsWith('.') && !join(file, '..', spec).startsWith(join(root, 'src', 'core'));
        if (INFRA.test(spec) || leavesCore) offenders.push(`${relative(root, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps surfaces apart from each other and from adapters', () => {
    const offenders: string[] = [];
    const surfaces = join(root, 'src', 'surfaces');
    for (const file of tsFiles(surfaces)) {
      const own = relative(surfaces, file).split(/[/\\]/)[0]!;
      for (const spec of importsOf(file).filter((s) => s.startsWith('.'))) {
        const target = join(file, '..', spec);
        const rel = relative(join(root, 'src'), target).split(/[/\\]/);
        if (rel[0] === 'adapters' || rel[0] === 'app') offenders.push(`${relative(root, file)} imports ${spec}`);
        if (rel[0] === 'surfaces' && rel[1] !== own && rel[1] !== 'http-kit') offenders.push(`${relative(root, file)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  /**
   * docs/architecture.md "Layers": surfaces call services only. A module that declares a storage port (a
   * `*.repository.ts`, `storage.port.ts`, or any module exporting an `interface …Repository`, like search-log.ts)
   * is out of a surface's reach, so no route can read or write storage past the services' rules and quotas.
   */
  const declaresStoragePort = (target: string): boolean =>
    /\.repository\.ts$|[/\\]storage\.port\.ts$/.test(target)
    || /export\s+interface\s+\w*Repository\b/.test(readFileSync(target, 'utf8'));

  function storagePortImports(file: string, specs: readonly string[]): string[] {
    return specs.filter((s) => s.startsWith('.'))
      .filter((spec) => declaresStoragePort(join(file, '..', spec)))
      .map((spec) => `${relative(root, file)} imports ${spec}`);
  }

  it('keeps the dashboard on the core only (no surface, adapter, app or repository import)', () => {
    const offenders: string[] = [];
    for (const file of tsFiles(join(root, 'src', 'dashboard'))) {
      const specs = importsOf(file);
      for (const spec of specs.filter((s) => s.startsWith('.'))) {
        const top = relative(join(root, 'src'), join(file, '..', spec)).split(/[/\\]/)[0];
        if (top !== 'core' && top !== 'dashboard') offenders.push(`${relative(root, file)} imports ${spec}`);
      }
      offenders.push(...storagePortImports(file, specs));
    }
    expect(offenders).toEqual([]);
  });

  it('lets surfaces reach storage only through services (no repository or storage port import)', () => {
    const offenders = tsFiles(join(root, 'src', 'surfaces')).flatMap((file) => storagePortImports(file, importsOf(file)));
    expect(offenders).toEqual([]);
  });

  /** docs/architecture.md "Layers": mcp -> core. The MCP server is a surface without HTTP: services only. */
  it('keeps the MCP server on the core: no HTTP server, driver, adapter, surface, app or storage port', () => {
    const mcp = join(root, 'src', 'mcp');
    const offenders: string[] = [];
    for (const file of tsFiles(mcp)) {
      const specs = importsOf(file);
      for (const spec of specs) {
        const target = spec.startsWith('.') ? relative(join(root, 'src'), join(file, '..', spec)).split(/[/\\]/)[0] : undefined;
        if (INFRA.test(spec) || spec === '@modelcontextprotocol/node' || (target !== undefined && target !== 'core' && target !== 'mcp')) {
          offenders.push(`${relative(root, file)} imports ${spec}`);
        }
      }
      offenders.push(...storagePortImports(file, specs));
    }
    expect(tsFiles(mcp).length).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });

  it('detects a surface importing a storage port (the check can fail)', () => {
    const route = join(root, 'src', 'surfaces', 'g2', 'routes.ts');
    const ports = ['../../core/memories/memory.repository.ts', '../../core/storage.port.ts', '../../core/search/search-log.ts'];
    expect(storagePortImports(route, [...ports, '../../core/memories/memory.service.ts'])).toHaveLength(ports.length);
  });

  it('detects a violation (the check can fail)', () => {
    const fake = join(root, 'src', 'core', 'fake.ts');
    const spec = '../adapters/storage/sqlite/sqlite.storage.ts';
    expect(join(fake, '..', spec).startsWith(join(root, 'src', 'core'))).toBe(false);
    expect(INFRA.test('fastify')).toBe(true);
  });

  it('reads process.env only in app/', () => {
    const offenders = tsFiles(join(root, 'src'))
      .filter((f) => !relative(root, f).startsWith(join('src', 'app')))
      .filter((f) => /process\.env/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });
});
