/** A GitHub-flavoured markdown table; `align` is 'l' or 'r' per column (default left). */
export function table(header: readonly string[], rows: readonly (readonly string[])[], align: string = ''): string {
  const sep = header.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), `|${sep.map((s) => ` ${s} `).join('|')}|`, ...rows.map(line)].join('\n');
}
