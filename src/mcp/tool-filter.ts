import * as z from 'zod';
import { validationError, type FieldProblem } from '../core/errors.ts';
import type { MemoryFilter } from '../core/memories/memory.types.ts';
import { checkFilter, parseMetadataFilter, parseTimestamp } from '../core/search/filters.ts';

/** The filter memory_search and memory_forget take (one schema, so an agent filters both alike). */
export const TOOL_FILTER = z.object({
  memory_type: z.union([z.string(), z.array(z.string())]).optional().describe('One type, or any of several'),
  tags_any: z.array(z.string()).optional().describe('Memories having at least one of these tags'),
  tags_all: z.array(z.string()).optional().describe('Memories having every one of these tags'),
  metadata: z.record(z.string(), z.unknown()).optional()
    .describe('key: value (equal) or key: [values] (any of); dotted keys reach nested objects, e.g. "source.kind"'),
  topic_id: z.string().optional().describe('Only memories of this topic'),
  created_from: z.string().optional().describe('ISO 8601: created at or after'),
  created_to: z.string().optional().describe('ISO 8601: created at or before'),
});
export type ToolFilterArgs = z.infer<typeof TOOL_FILTER>;

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
