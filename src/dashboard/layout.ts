import type { Principal } from '../core/api-keys/api-key.types.ts';
import { html, type HtmlPart, type SafeHtml } from './html.ts';
import { NAV, type Section } from './nav.ts';

export const DASHBOARD_PREFIX = '/dashboard';
export type { Section };

/** What the chrome of a signed-in page shows. */
export interface Chrome {
  principal: Principal;
  workspace: string;
  csrfToken: string;
  section: Section | null;
  /** The current path (for the workspace switcher, which reloads it). */
  path: string;
}

/** A hidden `_csrf` field: every POST form of a session carries it. */
export const csrfField = (token: string): SafeHtml => html`<input type="hidden" name="_csrf" value="${token}">`;

function document(title: string, body: HtmlPart, scripts: readonly string[] = []): SafeHtml {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Mnemo</title><link rel="icon" href="${DASHBOARD_PREFIX}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${DASHBOARD_PREFIX}/assets/dashboard.css"></head>
<body>${body}
${scripts.map((s) => html`<script src="${DASHBOARD_PREFIX}/assets/${s}"></script>`)}
</body></html>`;
}

const navigation = (current: Section | null): SafeHtml => html`<nav aria-label="Sections">${NAV.map((n) =>
  html`<a href="${DASHBOARD_PREFIX}${n.path}"${current === n.id ? html` aria-current="page"` : ''}>${n.label}</a>`)}</nav>`;

/** A signed-in page: navigation, who is signed in, the workspace switcher and sign-out around `main`. */
export function page(title: string, chrome: Chrome, main: HtmlPart, scripts: readonly string[] = []): SafeHtml {
  const p = chrome.principal;
  return document(title, html`
<header>
  <a class="brand" href="${DASHBOARD_PREFIX}">Mnemo</a>
  ${navigation(chrome.section)}
  <form class="workspace" method="get" action="${chrome.path}">
    <label>Workspace <input name="workspace" value="${chrome.workspace}" size="12" required></label><button>Switch</button>
  </form>
  <span class="who" title="${p.keyId}">${p.userId} · ${p.tenantId} · <span class="mode mode-${p.mode}">${p.mode}</span></span>
  <form method="post" action="${DASHBOARD_PREFIX}/sign-out">${csrfField(chrome.csrfToken)}<button id="sign-out">Sign out</button></form>
</header>
<main><h1>${title}</h1>${main}</main>`, [...scripts, 'dashboard.js']);
}

/**
 * A page outside a session (sign-in, errors). `withNav`: the sections' links too (an error page, so that a person
 * who followed a dead link can go on; a section they are not signed in for asks them to sign in).
 */
export const barePage = (title: string, main: HtmlPart, withNav = false): SafeHtml =>
  document(title, html`<header><a class="brand" href="${DASHBOARD_PREFIX}">Mnemo</a>${withNav ? navigation(null) : ''}</header>
<main class="narrow"><h1>${title}</h1>${main}</main>`);

export const dateTime = (d: Date | null): SafeHtml =>
  (d === null ? html`<span class="muted">—</span>` : html`<time datetime="${d.toISOString()}">${d.toISOString().replace('T', ' ').slice(0, 19)} UTC</time>`);

/** `?a=1&b=2` from the defined entries. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text ? `?${text}` : '';
}
