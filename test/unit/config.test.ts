import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.ts';

describe('configuration', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, embeddings: { kind: 'local' }, maxContentBytes: 1024 * 1024, logLevel: 'info' });
    expect(c.databaseFile).toMatch(/data[/\\]mnemo\.db$/);
    expect(c.bodyLimitBytes).toBeGreaterThanOrEqual(c.maxContentBytes);
  });

  it('reads the MCP Origin allowlist: hostnames, extension schemes, or * for any', () => {
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    expect(loadConfig({ MNEMO_MCP_ALLOWED_ORIGINS: ' App.Example.com, [::1] ,moz-extension://*' }).mcpAllowedOrigins)
      .toEqual(['app.example.com', '[::1]', 'moz-extension://*']);
    expect(loadConfig({ MNEMO_MCP_ALLOWED_ORIGINS: '*' }).mcpAllowedOrigins).toBe('*');
  });

  it('prepares PostgreSQL statements unless told not to', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ MNEMO_DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements).toBe(false);
  });

  it('makes acknowledged writes durable unless told to trade that for speed', () => {
    expect(loadConfig({}).sqliteSynchronous).toBe('full');
    expect(loadConfig({ MNEMO_SQLITE_SYNCHRONOUS: ' ' }).sqliteSynchronous).toBe('full');
    expect(loadConfig({ MNEMO_SQLITE_SYNCHRONOUS: 'NORMAL' }).sqliteSynchronous).toBe('normal');
    expect(loadConfig({ MNEMO_SQLITE_SYNCHRONOUS: 'full' }).sqliteSynchronous).toBe('full');
    expect(() => loadConfig({ MNEMO_SQLITE_SYNCHRONOUS: 'off' })).toThrow(/MNEMO_SQLITE_SYNCHRONOUS must be one of full, normal \(got "off"\)/);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ MNEMO_EMBEDDINGS: 'magic' }, 'MNEMO_EMBEDDINGS'],
    [{ MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_URL: 'http://x' }, 'MNEMO_EMBEDDINGS_MODEL'],
    [{ MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_MODEL: 'm' }, 'MNEMO_EMBEDDINGS_URL'],
    [{ MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_MODEL: 'm', MNEMO_EMBEDDINGS_URL: 'ftp://x' }, 'MNEMO_EMBEDDINGS_URL'],
    [{ MNEMO_MAX_CONTENT_BYTES: '-5' }, 'MNEMO_MAX_CONTENT_BYTES'],
    [{ MNEMO_MAX_CONTENT_BYTES: '5000', MNEMO_BODY_LIMIT_BYTES: '4096' }, 'MNEMO_BODY_LIMIT_BYTES'],
    [{ MNEMO_LOG_LEVEL: 'loud' }, 'MNEMO_LOG_LEVEL'],
    [{ MNEMO_DATABASE_URL: 'mysql://localhost/x' }, 'MNEMO_DATABASE_URL'],
    [{ MNEMO_DATABASE_URL: 'postgres://localhost/x', MNEMO_DATABASE_POOL_SIZE: '0' }, 'MNEMO_DATABASE_POOL_SIZE'],
    [{ MNEMO_DATABASE_URL: 'postgres://localhost/x', MNEMO_DATABASE_PREPARED_STATEMENTS: 'no' }, 'MNEMO_DATABASE_PREPARED_STATEMENTS'],
    [{ MNEMO_REDIS_URL: 'localhost:6379' }, 'MNEMO_REDIS_URL'],
    [{ MNEMO_REDIS_URL: 'http://localhost:6379' }, 'MNEMO_REDIS_URL'],
    [{ MNEMO_SQLITE_SYNCHRONOUS: 'off' }, 'MNEMO_SQLITE_SYNCHRONOUS'],
    [{ MNEMO_SQLITE_SYNCHRONOUS: 'fast' }, 'MNEMO_SQLITE_SYNCHRONOUS'],
    [{ MNEMO_DASHBOARD_URL: 'dashboard.example.com' }, 'MNEMO_DASHBOARD_URL'],
    [{ MNEMO_COST_COMPUTE_SECOND: '-1' }, 'MNEMO_COST_COMPUTE_SECOND'],
    [{ MNEMO_COST_API_CALLS_PER_1000: 'free' }, 'MNEMO_COST_API_CALLS_PER_1000'],
    [{ MNEMO_COST_LLM_1M_TOKENS: '-0.5' }, 'MNEMO_COST_LLM_1M_TOKENS'],
    [{ MNEMO_DASHBOARD_URL: 'ftp://dashboard.example.com' }, 'MNEMO_DASHBOARD_URL'],
    [{ MNEMO_MCP_ALLOWED_ORIGINS: 'https://app.example.com' }, 'MNEMO_MCP_ALLOWED_ORIGINS'],
    [{ MNEMO_MCP_ALLOWED_ORIGINS: 'app.example.com:8443' }, 'MNEMO_MCP_ALLOWED_ORIGINS'],
    [{ MNEMO_MCP_ALLOWED_ORIGINS: 'ok.example.com, https://*' }, 'MNEMO_MCP_ALLOWED_ORIGINS'],
    [{ MNEMO_DASHBOARD_URL: 'https://dashboard.example.com/?a=1' }, 'MNEMO_DASHBOARD_URL'],
  ])('stops on %o naming %s', (env, variable) => {
    let error: unknown;
    try { loadConfig(env); } catch (e) { error = e; }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message).toContain(variable);
  });

  it('reads MNEMO_REDIS_URL (redis:// or rediss://), and never echoes its password in an error', () => {
    expect(loadConfig({}).redisUrl).toBeNull();
    expect(loadConfig({ MNEMO_REDIS_URL: ' redis://127.0.0.1:6380/2 ' }).redisUrl).toBe('redis://127.0.0.1:6380/2');
    expect(loadConfig({ MNEMO_REDIS_URL: 'rediss://:pw@cache.internal:6380' }).redisUrl).toBe('rediss://:pw@cache.internal:6380');
    expect(() => loadConfig({ MNEMO_REDIS_URL: 'http://user:s3cret@cache:6379' })).toThrow(/user:\*\*\*@cache/);
    expect(() => loadConfig({ MNEMO_REDIS_URL: 'http://user:s3cret@cache:6379' })).not.toThrow(/s3cret/);
  });

  it('puts the dashboard (approvalUrl) at MNEMO_DASHBOARD_URL, else at the server\'s own address', () => {
    expect(loadConfig({}).dashboardUrl).toBe('http://127.0.0.1:8080/dashboard');
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).dashboardUrl).toBe('http://0.0.0.0:9000/dashboard');
    expect(loadConfig({ HOST: '::1' }).dashboardUrl).toBe('http://[::1]:8080/dashboard');
    expect(loadConfig({ MNEMO_DASHBOARD_URL: ' https://mnemo.example.com/ops/dashboard/ ' }).dashboardUrl).toBe('https://mnemo.example.com/ops/dashboard');
    expect(() => loadConfig({ MNEMO_DASHBOARD_URL: 'https://user:s3cret@mnemo.example.com' })).toThrow(/user:\*\*\*@mnemo/);
  });

  it('reads MNEMO_EMBEDDING_WORKERS for the local model (default left to the adapter: one per CPU)', () => {
    expect(loadConfig({}).embeddings).toEqual({ kind: 'local', workers: undefined });
    expect(loadConfig({ MNEMO_EMBEDDING_WORKERS: '3' }).embeddings).toEqual({ kind: 'local', workers: 3 });
    expect(() => loadConfig({ MNEMO_EMBEDDING_WORKERS: '0' })).toThrow(/MNEMO_EMBEDDING_WORKERS must be between 1 and 64/);
    expect(() => loadConfig({ MNEMO_EMBEDDING_WORKERS: 'two' })).toThrow(/MNEMO_EMBEDDING_WORKERS must be a whole number/);
  });

  it('reads the openai settings', () => {
    const c = loadConfig({ MNEMO_EMBEDDINGS: 'openai', MNEMO_EMBEDDINGS_URL: 'http://127.0.0.1:1/v1', MNEMO_EMBEDDINGS_MODEL: 'text-embedding-3-small', MNEMO_EMBEDDINGS_API_KEY: 'sk', MNEMO_EMBEDDINGS_DIMENSIONS: '512' });
    expect(c.embeddings).toEqual({ kind: 'openai', url: 'http://127.0.0.1:1/v1', model: 'text-embedding-3-small', apiKey: 'sk', dimensions: 512 });
  });
});
