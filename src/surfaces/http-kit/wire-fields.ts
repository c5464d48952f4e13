import type { FieldProblem } from '../../core/errors.ts';

/** A field problem as the surfaces without a `reason` show it. */
export type WireFieldProblem = Pick<FieldProblem, 'field' | 'message'>;

/** The core's problems without their reason (only surfaces that document a reason show it). */
export const wireFields = (fields: readonly WireFieldProblem[] | undefined): WireFieldProblem[] =>
  (fields ?? []).map(({ field, message }) => ({ field, message }));
