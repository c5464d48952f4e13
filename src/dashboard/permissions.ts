import type { Principal } from '../core/api-keys/api-key.types.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import { authorize } from '../core/operations/runner.ts';

/**
 * Whether `principal` may run `operation`: a section, a figure or a button is shown only to those who may use it.
 * The core's own check (authorize) decides, so the page never disagrees with what the action would answer.
 */
export function may(operation: OperationName, principal: Principal): boolean {
  try {
    authorize(operation, principal);
    return true;
  } catch {
    return false;
  }
}
