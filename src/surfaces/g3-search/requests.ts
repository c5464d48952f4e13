import type { FastifySchemaValidationError } from 'fastify';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import { DEFAULT_WORKSPACE, workspaceProblem } from '../../core/scope.ts';
import { parseFilterWire } from '../http-kit/filter-wire.ts';
import { fieldProblemsFromValidation } from '../http-kit/validation.ts';
import { readValidity, type ReadValidity } from '../http-kit/validity.ts';
import type { WorkspaceOf } from '../http-kit/workspace.ts';
import type { Clock } from '../../core/clock.ts';

/**
 * G3 request bodies -> checked service inputs. The route schemas check shapes (AJV, attached to the request rather
 * than thrown); the rules here check what a schema cannot (blank query, dates, metadata keys, operators, namespace
 * against X-Workspace-ID, alias and weight pairs). Both kinds of problems are reported together, one per field.
 */

type Loose = Record<string, unknown>;
type SchemaErrors = readonly FastifySchemaValidationError[];

/** What the route hands over: the body as parsed (possibly schema-invalid), the workspace header, AJV's errors. */
export interface RawRequest {
  body: unknown;
  /** The workspace the request names (`X-Workspace-ID`), resolved. */
  workspace: WorkspaceOf;
  validationError?: { validation?: unknown } | undefined;
  /** "Now" for the `validity` marker of results read with include_expired. */
  clock: Pick<Clock, 'now'>;
}

export interface SearchRequest {
  query: string;
  topK: number;
  threshold: number;
  filter: MemoryFilter;
  /** The filters as sent, for the search log. */
  logFilters: Record<string, unknown>;
  includeMetadata: boolean;
  includeEmbedding: boolean;
  /** The deprecated `includeVector` was used. */
  usedDeprecatedAlias: boolean;
  workspace: string;
  /** `as_of` / `include_expired` (docs/memory-lifecycle.md). */
  validity: ReadValidity;
}

export interface HybridRequest extends SearchRequest {
  semanticWeight: number;
  keywordWeight: number;
  rerank: boolean;
}

export type BatchSlot =
  | { ok: true; query: string; topK: number; threshold: number; filter: MemoryFilter; logFilters: Record<string, unknown>; validity: ReadValidity }
  | { ok: false; query: string | null; problems: FieldProblem[] };

export interface BatchRequest {
  workspace: string;
  slots: BatchSlot[];
}

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const asObject = (v: unknown): Loose => (isObject(v) ? v : {});

const schemaErrorsOf = (raw: RawRequest): SchemaErrors => {
  const v = raw.validationError?.validation;
  return Array.isArray(v) ? (v as SchemaErrors) : [];
};

/** `field` is `root` or lies inside it (`root.x`, `root[0]`). */
const within = (field: string, root: string): boolean =>
  field === root || field.startsWith(`${root}.`) || field.startsWith(`${root}[`);

/**
 * Schema problems and rule problems as one list, one entry per field (a rule's message wins: it is the more
 * specific). The filter rules check every filter completely, so once they found something, AJV's messages about
 * the filters (which repeat each branch of a union) are left out.
 */
function mergeProblems(schema: FieldProblem[], rules: FieldProblem[], filterRoot?: string): FieldProblem[] {
  const rulesSawFilters = filterRoot !== undefined && rules.some((p) => within(p.field, filterRoot));
  const byField = new Map<string, FieldProblem>();
  for (const p of schema) {
    if (rulesSawFilters && within(p.field, filterRoot!)) continue;
    if (!byField.has(p.field)) byField.set(p.field, p);
  }
  for (const p of rules) byField.set(p.field, p);
  return [...byField.values()];
}

const prefixed = (prefix: string, name: string): string => (prefix ? `${prefix}.${name}` : name);

function checkQuery(query: unknown, field: string, problems: FieldProblem[]): void {
  if (typeof query === 'string' && query.trim().length === 0) problems.push({ field, reason: 'empty', message: 'must not be blank' });
}

// ---------------------------------------------------------------------------------------------------------------
// filters

/**
 * Body `namespace`, else the workspace the request names (http-kit's workspaceOf: `X-Workspace-ID`, else
 * `default`); both given and different is a problem on `namespace`.
 */
export function resolveWorkspace(namespace: unknown, named: WorkspaceOf, problems: FieldProblem[]): string {
  const fromHeader = named.ok ? (named.from === undefined ? undefined : named.workspace) : named.value;
  if (namespace !== undefined) {
    if (typeof namespace !== 'string') return DEFAULT_WORKSPACE; // the schema names it
    const problem = workspaceProblem(namespace, 'namespace');
    if (problem) problems.push(problem);
    else if (fromHeader !== undefined && fromHeader !== namespace) {
      problems.push({ field: 'namespace', reason: 'invalid_value', message: 'differs from the X-Workspace-ID header; give one of them, or the same value in both' });
    }
    return namespace;
  }
  if (!named.ok) {
    problems.push(named.problem);
    return DEFAULT_WORKSPACE;
  }
  return named.workspace;
}

function embeddingFlag(body: Loose, problems: FieldProblem[]): { include: boolean; deprecatedAlias: boolean } {
  const current = body.includeEmbedding;
  const alias = body.includeVector;
  if (typeof current === 'boolean' && typeof alias === 'boolean' && current !== alias) {
    problems.push({ field: 'includeVector', reason: 'invalid_value', message: 'is a deprecated alias of includeEmbedding and must equal it when both are given' });
  }
  const include = typeof current === 'boolean' ? current : typeof alias === 'boolean' ? alias : false;
  return { include, deprecatedAlias: alias !== undefined };
}

const logFiltersOf = (filters: unknown): Record<string, unknown> => (isObject(filters) ? { ...filters } : {});

/** The search log's filters, with as_of / include_expired when the request gave them. */
function logFiltersWithValidity(filters: unknown, body: Loose): Record<string, unknown> {
  const out = logFiltersOf(filters);
  if (body.as_of !== undefined) out.as_of = body.as_of;
  if (body.include_expired !== undefined) out.include_expired = body.include_expired;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// whole requests

function throwIfAny(problems: FieldProblem[]): void {
  if (problems.length > 0) throw validationError(problems);
}

/** Shared by /search and /hybrid: rule checks, merged with the schema's problems; throws VALIDATION_FAILED. */
function parseCommon(raw: RawRequest, extraRules: (body: Loose, problems: FieldProblem[]) => void): SearchRequest {
  const body = asObject(raw.body);
  const rules: FieldProblem[] = [];
  checkQuery(body.query, 'query', rules);
  const filter = parseFilterWire(body.filters, 'filters', rules);
  const workspace = resolveWorkspace(body.namespace, raw.workspace, rules);
  const embedding = embeddingFlag(body, rules);
  const validity = readValidity(body, raw.clock, rules);
  extraRules(body, rules);
  throwIfAny(mergeProblems(fieldProblemsFromValidation(schemaErrorsOf(raw)), rules, 'filters'));
  // The schema passed: the fields have their types (defaults filled in by the validator).
  return {
    query: body.query as string,
    topK: body.topK as number,
    threshold: body.threshold as number,
    filter,
    logFilters: logFiltersWithValidity(body.filters, body),
    includeMetadata: body.includeMetadata as boolean,
    includeEmbedding: embedding.include,
    usedDeprecatedAlias: embedding.deprecatedAlias,
    workspace,
    validity,
  };
}

export const parseSearch = (raw: RawRequest): SearchRequest => parseCommon(raw, () => undefined);

export function parseHybrid(raw: RawRequest): HybridRequest {
  const common = parseCommon(raw, (body, problems) => {
    if (body.semanticWeight === 0 && body.keywordWeight === 0) {
      const message = 'semanticWeight and keywordWeight must not both be 0';
      problems.push({ field: 'semanticWeight', reason: 'invalid_value', message }, { field: 'keywordWeight', reason: 'invalid_value', message });
    }
  });
  const body = asObject(raw.body);
  return {
    ...common,
    semanticWeight: body.semanticWeight as number,
    keywordWeight: body.keywordWeight as number,
    rerank: body.rerank as boolean,
  };
}

const ITEM_PATH = /^\/searches\/(\d+)(?:\/|$)/;

/**
 * /batch: problems of the request as a whole (no `searches` array, too many, bad namespace) throw; a bad item only
 * marks its own slot. The field names of an item's problems keep their place in the request (`searches[2].topK`).
 */
export function parseBatch(raw: RawRequest): BatchRequest {
  const body = asObject(raw.body);
  const wholeRules: FieldProblem[] = [];
  const workspace = resolveWorkspace(body.namespace, raw.workspace, wholeRules);
  // as_of / include_expired of the whole batch; an item may give its own, which win for that search.
  const batchValidity = { as_of: body.as_of, include_expired: body.include_expired };
  readValidity(batchValidity, raw.clock, wholeRules);

  const byItem = new Map<number, FastifySchemaValidationError[]>();
  const whole: FastifySchemaValidationError[] = [];
  for (const e of schemaErrorsOf(raw)) {
    const m = ITEM_PATH.exec(e.instancePath);
    if (!m) {
      whole.push(e);
      continue;
    }
    const i = Number(m[1]);
    byItem.set(i, [...(byItem.get(i) ?? []), e]);
  }

  const items = Array.isArray(body.searches) ? (body.searches as unknown[]) : [];
  const slots: BatchSlot[] = items.map((item, i) => {
    const at = `searches[${i}]`;
    const rules: FieldProblem[] = [];
    const fields = asObject(item);
    checkQuery(fields.query, prefixed(at, 'query'), rules);
    const filter = parseFilterWire(fields.filters, prefixed(at, 'filters'), rules);
    const own = {
      as_of: fields.as_of ?? batchValidity.as_of,
      include_expired: fields.include_expired ?? batchValidity.include_expired,
    };
    const names = { asOf: prefixed(at, 'as_of'), includeExpired: prefixed(at, 'include_expired') };
    const validityProblems: FieldProblem[] = [];
    const validity = readValidity(own, raw.clock, validityProblems, names);
    // A bad batch-wide value is reported once, on its own field (the request is refused as a whole then).
    rules.push(...validityProblems.filter((p) => (p.field === names.asOf ? fields.as_of !== undefined : fields.include_expired !== undefined)));
    const problems = mergeProblems(fieldProblemsFromValidation(byItem.get(i) ?? []), rules, prefixed(at, 'filters'));
    const query = typeof fields.query === 'string' ? fields.query : null;
    if (problems.length > 0) return { ok: false, query, problems };
    return {
      ok: true, query: query!, topK: fields.topK as number, threshold: fields.threshold as number, filter,
      logFilters: logFiltersWithValidity(fields.filters, own), validity,
    };
  });

  const wholeProblems = mergeProblems(fieldProblemsFromValidation(whole), wholeRules);
  if (wholeProblems.length > 0) {
    // The request is refused as a whole: name every bad field, the items' included.
    throwIfAny([...wholeProblems, ...slots.flatMap((s) => (s.ok ? [] : s.problems))]);
  }
  return { workspace, slots };
}
