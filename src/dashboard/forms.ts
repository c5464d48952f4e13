import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError, validationError } from '../core/errors.ts';
import { describeRefusal } from './errors.ts';
import { html, type SafeHtml } from './html.ts';

/**
 * What the managing pages (pages/manage-*.ts) share: reading repeated and JSON form fields, and showing the core's
 * refusal above the form that was sent, so that a person sees the API's own message and keeps what they typed.
 */

/** Every value of a repeated form field (checkboxes), trimmed, blanks left out. */
export function fields(req: FastifyRequest, name: string): string[] {
  const body = req.body as Record<string, unknown> | null | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

/** Comma-separated text as a list (tags, user ids), blanks left out. */
export const listOf = (text: string | undefined): string[] =>
  (text ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0);

/**
 * A JSON object typed into a form field (blank: `{}`), or VALIDATION_FAILED naming the field and what the parser
 * found, so that a person can fix the text rather than guess.
 */
export function jsonObjectField(text: string | undefined, name: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw validationError([{ field: name, reason: 'invalid_format', message: `is not valid JSON (${(err as Error).message})` }], `${name} must be a JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError([{ field: name, reason: 'invalid_type', message: 'must be a JSON object such as {"project": "apollo"}' }], `${name} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** The refusal as the page shows it above the form: the core's message, with the status a REST client would get. */
export const refusalNotice = (err: Error): SafeHtml => {
  const { status, message } = describeRefusal(err);
  return html`<p class="refusal" id="refused" role="alert" data-status="${status}">${message}</p>`;
};

/**
 * Runs a form's action; a refusal of the core (a domain error: validation, permission, conflict, quota…) renders
 * the form again with the refusal above it and the refusal's status, instead of the bare error page.
 */
export async function orShowRefusal<T>(reply: FastifyReply, action: () => Promise<T>, again: (refusal: SafeHtml) => Promise<SafeHtml> | SafeHtml): Promise<T | SafeHtml> {
  try {
    return await action();
  } catch (err) {
    if (!isDomainError(err)) throw err;
    reply.status(describeRefusal(err).status);
    return again(refusalNotice(err));
  }
}
