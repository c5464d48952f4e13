import { validationError, type FieldProblem } from '../core/errors.ts';
import type { MemoryFilter } from '../core/memories/memory.types.ts';
import { checkFilter, parseMetadataFilter, parseTimestamp } from '../core/search/filters.ts';

/** The filter fields memory_search and memory_forget share (the same names, so an agent filters both alike). */
export interface ToolFilterArgs {
  memory_type?: string | string[] | undefined; tags_any?: string[] | undefined; tags_all?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined; topic_id?: string | undefined; created_from?: string | undefined; created_to?: string | undefined;
}

/**
 * A tool's filter as a MemoryFilter, checked by the core's rules (metadata keys, dates); every problem at once, named
 * under `field` (the tool's argument).
 */
export function toolFilter(f: ToolFilterArgs, field: string): MemoryFilter {
  const problems: FieldProblem[] = [];
  const date = (value: string | undefined, name: string): Date | undefined => {
    if (value === undefined) return undefined;
    const d = parseTimestamp(value);
    if (d === null) problems.push({ field: name, reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time' });
    return d ?? undefined;
  };
  const types = f.memory_type === undefined ? undefined : [f.memory_type].flat();
  const filter: MemoryFilter = {
    types: types && types.length > 0 ? types : undefined,
    tagsAny: f.tags_any && f.tags_any.length > 0 ? f.tags_any : undefined,
    tagsAll: f.tags_all && f.tags_all.length > 0 ? f.tags_all : undefined,
    metadata: parseMetadataFilter(f.metadata, problems, `${field}.metadata`),
    topicId: f.topic_id,
    createdFrom: date(f.created_from, `${field}.created_from`),
    createdTo: date(f.created_to, `${field}.created_to`),
  };
  checkFilter(filter, problems, { from: `${field}.created_from`, to: `${field}.created_to` });
  if (problems.length > 0) throw validationError(problems);
  return filter;
}
