// --help text, generated from the flag table so it cannot drift from it.
import { FLAGS, type FlagSpec } from './flags.ts';

const COMMANDS: readonly [string, string][] = [
  ['run', 'Run the route controller (the default when only flags are given).'],
  [
    'plan',
    'List routes and nodes once, print the routes it would create and delete and the conditions it would patch; change nothing.',
  ],
  ['simulate', 'Run the simulator (see `cloud-route-controller simulate --help`).'],
  ['version', 'Print the version.'],
];

function valueName(f: FlagSpec): string {
  if (f.kind === 'bool') return '';
  return ` ${f.valueName ?? f.kind}`;
}

function defaultText(f: FlagSpec): string {
  if (f.name === 'cloud-provider') return ' (required)';
  if (f.default === '') return ' (default "")';
  return f.kind === 'string' ? ` (default "${f.default}")` : ` (default ${f.default})`;
}

function flagLines(): string {
  const rows = FLAGS.map((f) => {
    const name = f.shorthand ? `-${f.shorthand}, --${f.name}` : `    --${f.name}`;
    return { left: `  ${name}${valueName(f)}`, right: `${f.help}${defaultText(f)}` };
  });
  rows.push({ left: '  -h, --help', right: 'Help for this command.' });
  const width = Math.max(...rows.map((r) => r.left.length)) + 3;
  return rows.map((r) => `${r.left.padEnd(width)}${r.right}`).join('\n');
}

export function usage(command: 'run' | 'plan' | undefined): string {
  const head =
    command === 'plan'
      ? 'Plan: one dry-run reconcile against the cluster and the cloud; prints what `run` would change.\n\n' +
        'Usage:\n  cloud-route-controller plan [flags]\n'
      : command === 'run'
        ? 'Run the route controller: keeps one cloud route per node pod CIDR and the NetworkUnavailable condition.\n\n' +
          'Usage:\n  cloud-route-controller run [flags]\n  cloud-route-controller [flags]\n'
        : 'cloud-route-controller: the Kubernetes route controller (KEP-5237 watch-based reconciliation) as a daemon.\n\n' +
          'Usage:\n  cloud-route-controller [command] [flags]\n\nCommands:\n' +
          COMMANDS.map(([c, d]) => `  ${c.padEnd(10)}${d}`).join('\n') +
          '\n';
  const note =
    command === 'plan'
      ? '\nLeader election flags are accepted and ignored; plan never writes.\n'
      : '\nDurations use Go syntax (500ms, 1h30m). Booleans: --flag, --flag=true|false.\n';
  return `${head}\nFlags:\n${flagLines()}\n${note}`;
}
