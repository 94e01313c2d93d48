// --help and docs/daemon.md name every flag with its default.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { FLAGS } from './flags.ts';
import { usage } from './help.ts';

test('--help lists every flag with its default', () => {
  for (const cmd of [undefined, 'run', 'plan'] as const) {
    const text = usage(cmd);
    for (const f of FLAGS) {
      const line = text.split('\n').find((l) => l.includes(`--${f.name} `) || l.endsWith(`--${f.name}`));
      assert.ok(line, `${f.name} missing from usage(${cmd})`);
      const quoted = f.kind === 'string' || f.default === '';
      const def = `(default ${quoted ? `"${f.default}"` : f.default})`;
      if (f.name !== 'cloud-provider') assert.ok(line.includes(def), line);
    }
  }
});

test('docs/daemon.md documents every flag with its default', () => {
  const doc = readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'daemon.md'), 'utf8');
  for (const f of FLAGS) {
    const row = doc
      .split('\n')
      .find((l) => l.startsWith(`| \`--${f.name}\``) || l.startsWith(`| \`-v\`, \`--${f.name}\``));
    assert.ok(row, `docs/daemon.md has no row for --${f.name}`);
    const def = f.name === 'cloud-provider' ? 'required' : `\`${f.default === '' ? '""' : f.default}\``;
    assert.ok(row.includes(def), `--${f.name}: default ${def} not in "${row}"`);
  }
});
