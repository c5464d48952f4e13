import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySerializerCompiler } from 'fastify';

/**
 * Response serializers as Fastify builds them by default (fast-json-stringify, no shared schemas), each compiled once
 * per process and schema object rather than once per app: compiling the routes' serializers (and, in validation.ts,
 * their validators) was most of building an app, about 150 of 230 ms, and the test suite builds hundreds of apps,
 * each over the same module-constant schemas. A server process builds one app, which compiles each schema once, as
 * before.
 */
const compileFresh = SerializerSelector()(undefined, {}) as FastifySerializerCompiler<unknown>;
const compiled = new WeakMap<object, ReturnType<FastifySerializerCompiler<unknown>>>();
let compilations = 0;

/** For tests: how many response schemas this process has compiled (a second app adds none). */
export const serializersCompiled = (): number => compilations;

export const cachedSerializerCompiler: FastifySerializerCompiler<unknown> = (route) => {
  const schema = route.schema as object;
  let serialize = compiled.get(schema);
  if (!serialize) {
    serialize = compileFresh(route);
    compilations++;
    compiled.set(schema, serialize);
  }
  return serialize;
};
