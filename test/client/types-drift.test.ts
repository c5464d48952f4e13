import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, renderClientTypes } from '../../scripts/generate-client-types.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** src/client/openapi-types.ts must be what the current routes generate: the client's types never lag the server. */
describe('the TypeScript client types (src/client/openapi-types.ts)', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());

  it('match the OpenAPI document /openapi.json serves', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as unknown;
    const generated = await renderClientTypes(document);
    const checkedIn = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    expect(checkedIn === generated, 'src/client/openapi-types.ts is stale: run `npm run client:types`').toBe(true);
  });
});
