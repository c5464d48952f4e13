import type { FastifyRequest } from 'fastify';
import { isDomainError, validationError, type FieldProblem } from '../../core/errors.ts';
import { fieldProblemsFromValidation } from './validation.ts';

/**
 * Gathering every problem of a request before answering once (routes that use `attachValidation` so that the
 * schema's problems and the rules' problems land in one 400).
 */

/** Problems the route schema found (none when it passed). */
export function schemaProblems(req: FastifyRequest): FieldProblem[] {
  const err = req.validationError;
  return err ? fieldProblemsFromValidation(err.validation) : [];
}

/** Runs `f`, turning a validation failure into problems on the list; undefined then. */
export function collectProblems<T>(problems: FieldProblem[], f: () => T): T | undefined {
  try {
    return f();
  } catch (e) {
    if (isDomainError(e) && e.code === 'VALIDATION_FAILED') {
      problems.push(...(e.details.fields ?? [{ field: 'body', reason: 'invalid_value' as const, message: e.message }]));
      return undefined;
    }
    throw e;
  }
}

/** One problem per field (the first found); throws VALIDATION_FAILED when there is any. */
export function throwIfAnyProblem(problems: readonly FieldProblem[]): void {
  if (problems.length === 0) return;
  const seen = new Set<string>();
  throw validationError(problems.filter((p) => (seen.has(p.field) ? false : (seen.add(p.field), true))));
}
