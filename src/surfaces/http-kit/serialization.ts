import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySerializerCompiler } from 'fastify';
import { oncePerSchema } from './schema-cache.ts';

/** Response serializers as Fastify builds them by default (fast-json-stringify, no shared schemas), once per schema. */
const compileFresh = SerializerSelector()(undefined, {}) as FastifySerializerCompiler<unknown>;
const serializers = oncePerSchema(compileFresh);

export const cachedSerializerCompiler: FastifySerializerCompiler<unknown> = (route) => serializers(route);

/** For tests: how many response schemas this process has compiled (a second app adds none). */
export const serializersCompiled = (): number => serializers.compilations();
