import type { Surface } from './surface.ts';

/** `G1 memories` → `g1`: the generation, as logs, events and metrics label it. */
export const surfaceLabel = (name: string): string => name.split(' ')[0]!.toLowerCase();

/**
 * Which API generation a URL belongs to (`g1` … `g11`), or undefined (health, docs, /metrics), from the prefixes the
 * mounted surfaces declare: one source for `user.activity`, the G7 measurement and the Prometheus labels. Longest
 * prefix first, where prefixes nest.
 */
export function surfaceResolver(surfaces: readonly Pick<Surface<never>, 'name' | 'prefixes'>[]): (url: string) => string | undefined {
  const prefixes = surfaces.flatMap((s) => s.prefixes.map((prefix) => [prefix, surfaceLabel(s.name)] as const))
    .sort((a, b) => b[0].length - a[0].length);
  return (url) => {
    const path = url.split('?')[0]!;
    return prefixes.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1];
  };
}
