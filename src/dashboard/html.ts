/**
 * HTML built by a tagged template that escapes every interpolated value unless it is already `SafeHtml` (made by
 * `html` itself or, for markup built and escaped elsewhere, `trusted`). User content can then only reach a page as
 * text: there is no way to interpolate a string unescaped by accident.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlPart = SafeHtml | string | number | boolean | null | undefined | readonly HtmlPart[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

function render(part: HtmlPart): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: HtmlPart[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

/** Markup that is already safe (e.g. search highlights, which core/search/highlights.ts escapes itself). */
export const trusted = (markup: string): SafeHtml => new SafeHtml(markup);

/**
 * Data for the page's scripts: a JSON island, never executed (CSP forbids inline scripts anyway). `<` is written
 * as \u003c so that no value can close the element.
 */
export const jsonIsland = (id: string, data: unknown): SafeHtml =>
  trusted(`<script type="application/json" id="${escapeHtml(id)}">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`);
