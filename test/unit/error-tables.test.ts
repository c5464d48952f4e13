import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { DOMAIN_ERROR_CODES, DomainError, type FieldProblem } from '../../src/core/errors.ts';
import { problemsFromFields } from '../../src/surfaces/g5-embeddings/errors.ts';
import { OPERATION_ERROR_CODES } from '../../src/surfaces/g6-batch/mappers.ts';
import { fieldProblemsFromValidation } from '../../src/surfaces/http-kit/validation.ts';
import {
  codesOf, END_MARKER, renderErrorTables, START_MARKER, SURFACE_ERROR_TABLES,
} from '../../scripts/error-tables.ts';

const WIRE_CODE = /^[A-Z][A-Z_]*[A-Z]$/;

describe('error tables', () => {
  it('give every surface a 4xx/5xx status and a wire code for every DomainErrorCode', () => {
    for (const { surface, table } of SURFACE_ERROR_TABLES) {
      expect(Object.keys(table).sort(), surface).toEqual([...DOMAIN_ERROR_CODES].sort());
      for (const code of DOMAIN_ERROR_CODES) {
        const rule = table[code];
        expect(Number.isInteger(rule.status) && rule.status >= 400 && rule.status <= 599, `${surface} ${code}`).toBe(true);
        for (const wire of codesOf(rule)) expect(wire, `${surface} ${code}`).toMatch(WIRE_CODE);
      }
    }
    for (const code of DOMAIN_ERROR_CODES) expect(OPERATION_ERROR_CODES[code], `G6 operation ${code}`).toMatch(WIRE_CODE);
  });

  it('are rendered, up to date, in docs/api.md (npm run docs:errors)', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const start = doc.indexOf(START_MARKER);
    const end = doc.indexOf(END_MARKER);
    expect(start).toBeGreaterThan(0);
    expect(doc.slice(start, end + END_MARKER.length)).toBe(renderErrorTables());
  });

  describe('are what each surface\'s error handler answers', () => {
    let app: FastifyInstance;
    const problem: FieldProblem = { field: 'title', reason: 'too_long', message: 'must be at most 10 characters' };

    beforeAll(async () => {
      app = Fastify({ logger: false });
      for (const { surface, createHandler } of SURFACE_ERROR_TABLES) {
        await app.register(async (r) => {
          r.setErrorHandler(createHandler(new ManualClock(0)));
          r.get<{ Params: { code: string }; Querystring: { resource?: string } }>('/:code', async (req) => {
            const code = DOMAIN_ERROR_CODES.find((c) => c === req.params.code)!;
            throw new DomainError(code, 'core message', { fields: [problem], resource: req.query.resource });
          });
        }, { prefix: `/${surface}` });
      }
      await app.ready();
    });
    afterAll(async () => { await app.close(); });

    const wireCodeOf = (body: { error: string | { code: string } }) => (typeof body.error === 'string' ? body.error : body.error.code);

    it('with the status and one of the codes of the row, for every code on every surface', async () => {
      for (const { surface, table } of SURFACE_ERROR_TABLES) {
        for (const code of DOMAIN_ERROR_CODES) {
          const res = await app.inject({ method: 'GET', url: `/${surface}/${code}` });
          expect(res.statusCode, `${surface} ${code}`).toBe(table[code].status);
          expect(codesOf(table[code]), `${surface} ${code}`).toContain(wireCodeOf(res.json()));
          // The core's field reasons stay inside: only G5 shows reasons, in its own words.
          expect(res.body, `${surface} ${code}`).not.toContain('"too_long"');
        }
      }
    });

    it('choosing a variant by the error\'s details', async () => {
      const codeAt = async (url: string) => wireCodeOf((await app.inject({ method: 'GET', url })).json());
      expect(await codeAt('/G1/NOT_FOUND')).toBe('MEMORY_NOT_FOUND');
      expect(await codeAt('/G1/NOT_FOUND?resource=topic')).toBe('TOPIC_NOT_FOUND');
      expect(await codeAt('/G1/NOT_FOUND?resource=ingestion')).toBe('INGESTION_NOT_FOUND');
      expect(await codeAt('/G9/NOT_FOUND?resource=webhook')).toBe('WEBHOOK_NOT_FOUND');
      expect(await codeAt('/G10/NOT_FOUND')).toBe('NOT_FOUND');
    });

    it('never a 500 for a code the surface does not raise itself', async () => {
      for (const [surface, code] of [['G6', 'EMBEDDING_FAILED'], ['G6', 'NOT_FOUND'], ['G9', 'TIMEOUT'], ['G10', 'AMBIGUOUS_ID']]) {
        const res = await app.inject({ method: 'GET', url: `/${surface}/${code}` });
        expect(res.statusCode, `${surface} ${code}`).not.toBe(500);
        expect(wireCodeOf(res.json()), `${surface} ${code}`).not.toBe('INTERNAL_ERROR');
      }
    });
  });
});

describe('field problem reasons', () => {
  it('come from the schema keyword that failed', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile({
      type: 'object', required: ['title'], additionalProperties: false,
      properties: {
        title: { type: 'string' }, name: { type: 'string', maxLength: 3 }, code: { type: 'string', pattern: '^[a-z]+$' },
        tags: { type: 'array', maxItems: 1 }, limit: { type: 'integer', minimum: 1 }, kind: { enum: ['a', 'b'] }, ok: { type: 'boolean' },
      },
    });
    expect(validate({ name: 'long', code: 'A1', tags: [1, 2], limit: 0, kind: 'c', ok: 'yes', extra: 1 })).toBe(false);
    const reasons = Object.fromEntries(fieldProblemsFromValidation(validate.errors!).map((p) => [p.field, p.reason]));
    expect(reasons).toEqual({
      title: 'required', name: 'too_long', code: 'invalid_format', tags: 'too_many', limit: 'out_of_range',
      kind: 'invalid_value', ok: 'invalid_type', extra: 'not_allowed',
    });
  });

  it('give G5 its reasons, whatever the message says', () => {
    const reasons = problemsFromFields([
      { field: 'input[0]', reason: 'too_long', message: 'is long' },
      { field: 'input[1]', reason: 'empty', message: 'is blank' },
      { field: 'input', reason: 'too_many', message: 'has 3000' },
      { field: 'model', reason: 'required', message: 'give one' },
      // An English message that once decided the reason no longer does.
      { field: 'input[2]', reason: 'invalid_value', message: 'is 9000 tokens; at most 8192' },
    ]).map((p) => p.reason);
    expect(reasons).toEqual(['input_too_long', 'empty_input', 'too_many_inputs', 'missing_required_field', 'invalid_value']);
  });
});
