/** The part of an OpenAPI 3 document the fuzzer reads: every operation, its parameters, body schema and credential. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  nullable?: boolean;
  description?: string;
}

export type Credential = 'apiKey' | 'bearer' | 'none';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. `/api/v1/memories/{id}`. */
  path: string;
  parameters: Parameter[];
  body?: JsonSchema;
  credential: Credential;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, {
    parameters?: { name: string; in: string; schema?: JsonSchema }[];
    requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
    security?: Record<string, unknown>[];
  }>>;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** Every operation of the document, in document order. */
export function operationsOf(doc: unknown): Operation[] {
  const d = doc as OpenApiDocument;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(d.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? [])
          .filter((p) => p.in === 'path' || p.in === 'query' || p.in === 'header')
          .map((p) => ({ name: p.name, in: p.in as Parameter['in'], schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema,
        credential: schemes.includes('bearer') ? 'bearer' : schemes.includes('apiKey') ? 'apiKey' : 'none',
      });
    }
  }
  return out;
}

export const routeName = (op: Pick<Operation, 'method' | 'path'>): string => `${op.method} ${op.path}`;
