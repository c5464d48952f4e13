import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.ts';

describe('reranker configuration', () => {
  it('is off unless MNEMO_RERANK_URL is set, whatever the other MNEMO_RERANK_* say', () => {
    expect(loadConfig({}).rerank).toBeNull();
    expect(loadConfig({ MNEMO_RERANK_MODEL: 'rerank-v3.5', MNEMO_RERANK_TOP_N: '50', MNEMO_RERANK_URL: ' ' }).rerank).toBeNull();
  });

  it('defaults to the best 20 candidates, a 2 s timeout, no model and no key', () => {
    expect(loadConfig({ MNEMO_RERANK_URL: 'http://tei:8080' }).rerank)
      .toEqual({ url: 'http://tei:8080', model: '', apiKey: undefined, topN: 20, timeoutMs: 2000 });
    expect(loadConfig({
      MNEMO_RERANK_URL: ' https://api.cohere.com/v2 ', MNEMO_RERANK_MODEL: ' rerank-v3.5 ', MNEMO_RERANK_API_KEY: 'k',
      MNEMO_RERANK_TOP_N: '50', MNEMO_RERANK_TIMEOUT_MS: '800',
    }).rerank).toEqual({ url: 'https://api.cohere.com/v2', model: 'rerank-v3.5', apiKey: 'k', topN: 50, timeoutMs: 800 });
  });

  it.each([
    [{ MNEMO_RERANK_URL: 'tei:8080' }, 'MNEMO_RERANK_URL'],
    [{ MNEMO_RERANK_URL: 'http://tei', MNEMO_RERANK_TOP_N: '0' }, 'MNEMO_RERANK_TOP_N'],
    [{ MNEMO_RERANK_URL: 'http://tei', MNEMO_RERANK_TIMEOUT_MS: 'soon' }, 'MNEMO_RERANK_TIMEOUT_MS'],
    // Waited for until the search's own deadline, a slow reranker would turn every hybrid search into a TIMEOUT.
    [{ MNEMO_RERANK_URL: 'http://tei', MNEMO_SEARCH_TIMEOUT_MS: '1500' }, 'MNEMO_RERANK_TIMEOUT_MS'],
  ])('refuses %o, naming %s', (env, variable) => {
    const err = (() => {
      try {
        loadConfig(env);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
  });
});
