import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { cachedSerializerCompiler, serializersCompiled } from '../../src/surfaces/http-kit/serialization.ts';
import { createValidatorCompiler, validatorsCompiled } from '../../src/surfaces/http-kit/validation.ts';
import { createTestApp } from '../support/test-app.ts';

/**
 * Every app a process builds shares the compiled validators and serializers of the routes' schemas (module constants):
 * compiled once per schema object, not once per app, and each still behaves as Fastify's own would.
 */
describe('schema compilers shared by the apps of a process', () => {
  const route = { method: 'POST', url: '/x', httpStatus: '200' };

  it('serializes as fast-json-stringify does, compiling each schema object once', () => {
    const schema = Type.Object({ id: Type.String(), score: Type.Number(), tags: Type.Array(Type.String()) });
    const serialize = cachedSerializerCompiler({ ...route, schema });
    // Only the schema's properties, in its types: what Fastify's default serializer writes.
    expect(JSON.parse(serialize({ id: 'm1', score: 0.5, tags: ['a'], secret: 'not in the schema' }))).toEqual({ id: 'm1', score: 0.5, tags: ['a'] });
    expect(cachedSerializerCompiler({ ...route, url: '/y', httpStatus: '201', schema })).toBe(serialize);
    // An equal schema that is another object is compiled for itself.
    expect(cachedSerializerCompiler({ ...route, schema: structuredClone(schema) })).not.toBe(serialize);
  });

  it('validates bodies strictly and text parts with coercion, in every app from one compilation', () => {
    const schema = Type.Object({ limit: Type.Integer({ minimum: 1 }), title: Type.Optional(Type.String()) });
    const first = createValidatorCompiler();
    const second = createValidatorCompiler();
    const body = first({ ...route, schema, httpPart: 'body' });
    const query = first({ ...route, schema, httpPart: 'querystring' });
    expect(second({ ...route, schema, httpPart: 'body' })).toBe(body);
    expect(second({ ...route, schema, httpPart: 'querystring' })).toBe(query);
    expect(body({ limit: '5' })).toBe(false);
    expect(query({ limit: '5' })).toBe(true);
    expect(body({ limit: 5, title: 7 })).toBe(false);
  });

  it("compiles nothing for a process's second app: every route schema is a module constant", async () => {
    // An inline schema (a literal in a route's options) is a new object per app: compiled again for each one.
    const first = await createTestApp();
    await first.close();
    const compiled = { validators: validatorsCompiled(), serializers: serializersCompiled() };
    expect(compiled.validators).toBeGreaterThan(20);
    expect(compiled.serializers).toBeGreaterThan(50);
    const second = await createTestApp();
    await second.close();
    expect({ validators: validatorsCompiled(), serializers: serializersCompiled() }).toEqual(compiled);
  });
});
