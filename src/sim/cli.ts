// `cloud-route-controller simulate` (the default of `npm start`): runs a
// scenario in both modes in virtual time and prints the comparison. Needs no
// cluster and no cloud account.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { formatDuration, parseDuration } from '../core/duration.ts';
import { checksText, describeScenario, describeTimeline, progressLine, textTable } from './report.ts';
import { htmlReport } from './report-html.ts';
import { PRESETS, SCENARIO_NAMES, validateScenario, type Scenario, type ScenarioName } from './scenario.ts';
import { simulate } from './simulate.ts';

export interface CliIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const defaultIO: CliIO = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

const d = PRESETS.default;
export const USAGE = `Usage: cloud-route-controller simulate [flags]

Runs the route controller against an in-memory cluster and cloud in virtual
time, once in periodic mode and once in watch mode, and compares them.

Flags:
  --scenario default|idle   preset to start from (default "default"; idle: heartbeats only)
  --nodes N                 nodes at start, each with its route (default ${d.nodes})
  --duration D              simulated time, Go syntax (default ${formatDuration(d.durationMs)})
  --churn N                 nodes joining and N leaving per simulated 10m (default ${d.churn})
  --burst N                 nodes joining in a scale-up burst, removed at 3/4 of the run (default ${d.burst})
  --heartbeat D             kubelet heartbeat interval, 0 disables (default ${formatDuration(d.heartbeatIntervalMs)})
  --cloud-latency D         latency of every cloud call (default ${formatDuration(d.cloudLatencyMs)})
  --cloud-rate-limit N      cloud route writes per second, burst 2N; 0 = unlimited (default ${d.cloudWriteRatePerSec})
  --seed N                  seed of the timeline and of the controller's jitter (default ${d.seed})
  --report PATH             HTML report (default sim-report.html)
  --json PATH               also write the results as JSON
  --quiet                   no progress lines
  -h, --help                this text
`;

const OPTIONS = {
  scenario: { type: 'string' },
  nodes: { type: 'string' },
  duration: { type: 'string' },
  churn: { type: 'string' },
  burst: { type: 'string' },
  heartbeat: { type: 'string' },
  'cloud-latency': { type: 'string' },
  'cloud-rate-limit': { type: 'string' },
  seed: { type: 'string' },
  report: { type: 'string', default: 'sim-report.html' },
  json: { type: 'string' },
  quiet: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const SCENARIO_FLAGS = [
  'nodes',
  'duration',
  'churn',
  'burst',
  'heartbeat',
  'cloud-latency',
  'cloud-rate-limit',
  'seed',
] as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; args: string[] }>>['values'];

/** Builds the scenario from the preset and the flags; returns errors instead of throwing. */
export function scenarioFromFlags(v: Values): { scenario: Scenario; errors: string[] } {
  const errors: string[] = [];
  const name = v.scenario ?? 'default';
  if (!(SCENARIO_NAMES as readonly string[]).includes(name))
    errors.push(`--scenario must be one of: ${SCENARIO_NAMES.join(', ')}`);
  const base =
    PRESETS[(SCENARIO_NAMES as readonly string[]).includes(name) ? (name as ScenarioName) : 'default'];
  const num = (flag: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) {
      errors.push(`invalid --${flag} "${text}": not a number`);
      return fallback;
    }
    return n;
  };
  const dur = (flag: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    try {
      return parseDuration(text);
    } catch (err) {
      errors.push(`invalid --${flag} "${text}": ${(err as Error).message}`);
      return fallback;
    }
  };
  const modified = SCENARIO_FLAGS.some((k) => v[k] !== undefined);
  const scenario: Scenario = {
    ...base,
    name: modified ? `${base.name} (modified)` : base.name,
    nodes: num('nodes', v.nodes, base.nodes),
    durationMs: dur('duration', v.duration, base.durationMs),
    churn: num('churn', v.churn, base.churn),
    burst: num('burst', v.burst, base.burst),
    heartbeatIntervalMs: dur('heartbeat', v.heartbeat, base.heartbeatIntervalMs),
    cloudLatencyMs: dur('cloud-latency', v['cloud-latency'], base.cloudLatencyMs),
    cloudWriteRatePerSec: num('cloud-rate-limit', v['cloud-rate-limit'], base.cloudWriteRatePerSec),
    seed: num('seed', v.seed, base.seed),
  };
  if (errors.length === 0) errors.push(...validateScenario(scenario));
  return { scenario, errors };
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  let values: Values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (err) {
    // One line, as the daemon's flags (R60); the usage is one --help away.
    io.err(`error: ${(err as Error).message} (see --help)`);
    return 1;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const { scenario, errors } = scenarioFromFlags(values);
  if (errors.length > 0) {
    for (const e of errors) io.err(`error: ${e}`);
    return 1;
  }

  io.out(`cloud-route-controller simulator (virtual time, in-memory cluster and cloud)`);
  io.out(describeScenario(scenario));
  const sim = await simulate(scenario, {
    ...(values.quiet ? {} : { onProgress: (p) => io.out(progressLine(p)) }),
    onRun: (label) => {
      if (!values.quiet && label === 'watch-control')
        io.out('[control ] watch mode again without heartbeats, to attribute reconciles');
    },
  });
  const c = sim.comparison;
  io.out('');
  io.out(describeTimeline(c));
  io.out(textTable(c));
  io.out('');
  io.out(checksText(c));
  io.out('');
  await writeFile(values.report, await htmlReport(c, sim.runs, sim.wallMs));
  io.out(`report written to ${values.report}`);
  if (values.json !== undefined) {
    const json = {
      comparison: c,
      perMinute: Object.fromEntries(Object.entries(sim.runs).map(([m, r]) => [m, r.perMinute])),
      reconciles: Object.fromEntries(Object.entries(sim.runs).map(([m, r]) => [m, r.reconciles])),
      latencies: Object.fromEntries(Object.entries(sim.runs).map(([m, r]) => [m, r.latencies])),
      timeline: sim.timeline,
      wallMs: sim.wallMs,
    };
    await writeFile(values.json, `${JSON.stringify(json, null, 2)}\n`);
    io.out(`json written to ${values.json}`);
  }
  io.out(`wall time ${(sim.wallMs / 1000).toFixed(1)}s (three columns and the control run)`);
  return 0;
}
