import type { FastifyInstance } from 'fastify';

/** Methods whose requests carry no meaningful body: many clients still send `Content-Type: application/json` on them. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * JSON bodies, parsed by Fastify's own parser (which refuses `__proto__` and `constructor.prototype` keys), with two
 * exceptions that clients of this family rely on: an empty body on GET, HEAD, DELETE and OPTIONS is no body rather
 * than malformed JSON, and an unknown path never parses its body, so it answers 404 whatever it carries.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (req.is404 || (body === '' && BODYLESS_METHODS.has(req.method))) {
      done(null, undefined);
      return;
    }
    parseJson(req, body as string, done);
  });
}
