/**
 * The metric names a PromQL expression reads. Hand-written (a few regexes) because no JS PromQL
 * parser is kept up to date; it is enough for the project's own alerts and dashboard, whose
 * expressions it is tested on: label matchers, ranges, strings, grouping clauses and function
 * calls are removed, and what is left that looks like an identifier is a metric name.
 */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+|\$\{\w+\}/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/(?<![\w.])([A-Za-z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = m;
    if (call !== undefined || KEYWORDS.has(name!.toLowerCase())) continue;
    names.add(name!);
  }
  return [...names].sort();
}

/** Metric families in Prometheus text (`# TYPE name kind`), with histogram/summary series names. */
export function exposedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, kind] = m;
    out.add(name!);
    if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(`${name!}${s}`);
    if (kind === 'summary') for (const s of ['_sum', '_count']) out.add(`${name!}${s}`);
  }
  return out;
}
