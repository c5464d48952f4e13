import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * Where a server's resident memory goes (`bench:engine --memory-detail`): /proc/PID/status (anonymous, file-backed and
 * shared resident pages), the biggest resident mappings of /proc/PID/smaps, and the main isolate's
 * process.memoryUsage() written by memory-probe.cjs on SIGUSR2.
 */
export const MEMORY_PROBE = fileURLToPath(new URL('./memory-probe.cjs', import.meta.url));

const MiB = 1024 * 1024;

interface Mapping { name: string; sizeKiB: number; rssKiB: number; anonKiB: number }

export async function memoryBreakdown(pid: number, probeFile: string): Promise<string> {
  const lines: string[] = [];
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  lines.push(`VmRSS ${field('VmRSS').toFixed(1)} MiB = RssAnon ${field('RssAnon').toFixed(1)} + RssFile ${field('RssFile').toFixed(1)} + RssShmem ${field('RssShmem').toFixed(1)}; threads ${/^Threads:\s+(\d+)/m.exec(status)?.[1]}`);

  const maps: Mapping[] = [];
  let current: Mapping | null = null;
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = { name: head[1] || '[anon]', sizeKiB: 0, rssKiB: 0, anonKiB: 0 };
      maps.push(current);
      continue;
    }
    const kv = /^(Size|Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (kv && current) {
      const v = Number(kv[2]);
      if (kv[1] === 'Size') current.sizeKiB = v;
      else if (kv[1] === 'Rss') current.rssKiB = v;
      else current.anonKiB = v;
    }
  }
  const byName = new Map<string, number>();
  for (const m of maps) byName.set(m.name, (byName.get(m.name) ?? 0) + m.rssKiB);
  lines.push('resident by mapping name: ' + [...byName].sort((a, b) => b[1] - a[1]).slice(0, 8)
    .map(([n, kib]) => `${n.split('/').pop()} ${(kib / 1024).toFixed(1)}`).join(', ') + ' (MiB)');
  lines.push('biggest resident mappings (MiB resident / virtual): ' + maps.filter((m) => m.rssKiB > 1024)
    .sort((a, b) => b.rssKiB - a.rssKiB).slice(0, 14)
    .map((m) => `${m.name.split('/').pop()} ${(m.rssKiB / 1024).toFixed(1)}/${(m.sizeKiB / 1024).toFixed(0)}`).join(', '));

  try {
    await rm(probeFile, { force: true });
    process.kill(pid, 'SIGUSR2');
    let text = '';
    for (let i = 0; i < 50 && !text; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      text = await readFile(probeFile, 'utf8').catch(() => '');
    }
    const probe = JSON.parse(text) as { usage: NodeJS.MemoryUsage; spaces: Record<string, number> };
    const u = probe.usage;
    lines.push(`main isolate: heapTotal ${(u.heapTotal / MiB).toFixed(1)}, heapUsed ${(u.heapUsed / MiB).toFixed(1)}, external ${(u.external / MiB).toFixed(1)}, arrayBuffers ${(u.arrayBuffers / MiB).toFixed(1)} MiB; spaces: ` +
      Object.entries(probe.spaces).filter(([, v]) => v > 0).map(([k, v]) => `${k.replace('_space', '')} ${(v / MiB).toFixed(1)}`).join(', '));
  } catch (err) {
    lines.push(`(no memoryUsage from the probe: ${String(err)})`);
  }
  return lines.join('\n');
}
