/**
 * Headers of every dashboard answer, its error pages included (a 404 is answered outside the dashboard's plugin):
 * no framing, and scripts, styles and images from this server only — no inline script can run.
 */
export const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};
