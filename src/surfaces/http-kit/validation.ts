import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldProblem, FieldReason } from '../../core/errors.ts';
import { oncePerSchema } from './schema-cache.ts';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const options = { allErrors: true, useDefaults: true, removeAdditional: false, strict: false } as const;
type Validator = ReturnType<FastifySchemaCompiler<unknown>>;
const validatorOf = (ajv: Ajv) =>
  oncePerSchema<{ schema: unknown }, Validator>(({ schema }) => ajv.compile(schema as object) as Validator);
/** The process's two validators (see createValidatorCompiler), each compiling a schema once (schema-cache.ts). */
let validators: { body: ReturnType<typeof validatorOf>; text: ReturnType<typeof validatorOf> } | null = null;

/** For tests: how many schemas the validators have compiled in this process (a second app adds none). */
export const validatorsCompiled = (): number => (validators ? validators.body.compilations() + validators.text.compilations() : 0);

/**
 * Two validators: query strings, params and headers arrive as text and are coerced to the schema's types;
 * JSON bodies are not (a title of 123 is an error, not "123"). Both report every error, so a 400 names every
 * bad field at once. Every app of the process shares them (schema-cache.ts).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  validators ??= {
    body: validatorOf(addFormats(new Ajv({ ...options, coerceTypes: false }))),
    text: validatorOf(addFormats(new Ajv({ ...options, coerceTypes: 'array' }))),
  };
  const { body, text } = validators;
  return (route) => (route.httpPart === 'body' ? body : text)(route);
}

/** `/tags/0` -> `tags[0]`, `/metadata/a` -> `metadata.a`. */
function pointerToField(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

/** Why ajv refused a value, by the keyword that failed. */
const REASON_BY_KEYWORD: Readonly<Record<string, FieldReason>> = {
  required: 'required',
  additionalProperties: 'not_allowed',
  type: 'invalid_type',
  enum: 'invalid_value',
  const: 'invalid_value',
  pattern: 'invalid_format',
  format: 'invalid_format',
  maxLength: 'too_long',
  minLength: 'too_short',
  maxItems: 'too_many',
  maxProperties: 'too_many',
  minItems: 'too_few',
  minProperties: 'too_few',
  maximum: 'out_of_range',
  minimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  multipleOf: 'out_of_range',
};

const reasonOfKeyword = (keyword: string | undefined): FieldReason =>
  (keyword !== undefined && Object.hasOwn(REASON_BY_KEYWORD, keyword) ? REASON_BY_KEYWORD[keyword]! : 'invalid_value');

/** Fastify's validation errors (from ajv) as field problems, one per bad field. */
export function fieldProblemsFromValidation(errors: readonly Partial<ErrorObject>[], prefix = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let field = pointerToField(e.instancePath ?? '');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty?: string } | undefined)?.missingProperty ?? '');
      field = field ? `${field}.${missing}` : missing;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty?: string } | undefined)?.additionalProperty ?? '');
      field = field ? `${field}.${extra}` : extra;
      message = 'is not allowed';
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
      if (allowed) message = `must be one of: ${allowed.join(', ')}`;
    }
    const name = prefix && field ? `${prefix}.${field}` : field || prefix || 'body';
    // One problem per field: a union reports each branch, and the first is the clearest.
    if (!seen.has(name)) {
      seen.add(name);
      out.push({ field: name, reason: reasonOfKeyword(e.keyword), message });
    }
  }
  return out;
}
