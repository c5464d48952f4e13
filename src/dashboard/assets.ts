import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RouteRegistrar } from './index.ts';
import { DASHBOARD_PREFIX } from './layout.ts';

/**
 * The dashboard's static files, read once at start: its own script, style sheet and icon, and Chart.js's UMD build from
 * node_modules (no CDN: nothing is fetched from the network at run time).
 */
const chartJsDir = dirname(createRequire(import.meta.url).resolve('chart.js'));
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'chart.umd.min.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(chartJsDir, 'chart.umd.min.js')) },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(import.meta.dirname, 'assets', 'dashboard.js')) },
  'dashboard.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(import.meta.dirname, 'assets', 'dashboard.css')) },
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(join(import.meta.dirname, 'assets', 'favicon.svg')) },
};

export const assetRoutes: RouteRegistrar = (app) => {
  app.get<{ Params: { name: string } }>(`${DASHBOARD_PREFIX}/assets/:name`, { config: { operation: null } }, async (req, reply) => {
    const asset = Object.hasOwn(ASSETS, req.params.name) ? ASSETS[req.params.name]! : undefined;
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(asset.body);
  });
};
