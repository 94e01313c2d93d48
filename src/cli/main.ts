// Entry point of the `cloud-route-controller` executable: subcommands run,
// plan, simulate and version; flags alone mean `run`.
import { usage } from './help.ts';
import { printErrors, processIO, type CliIO } from './io.ts';
import { VERSION } from './version.ts';

type SimMain = (argv: string[]) => Promise<number>;

async function simulate(argv: string[], io: CliIO): Promise<number> {
  // Imported lazily: the simulator is large and not needed by the daemon. The
  // specifier is computed, so the compiled build (dist/, .js) finds its twin.
  const spec = import.meta.url.endsWith('.ts') ? '../sim/cli.ts' : '../sim/cli.js';
  const mod = (await import(spec)) as { main?: unknown };
  if (typeof mod.main !== 'function') {
    printErrors(io, ['the simulator is not available in this build']);
    return 1;
  }
  return (mod.main as SimMain)(argv);
}

export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const [first, ...rest] = argv;
  try {
    switch (first) {
      case 'run':
        return await (await import('./run.ts')).runDaemon(rest, io);
      case 'plan':
        return await (await import('./plan.ts')).runPlan(rest, io);
      case 'simulate':
        return await simulate(rest, io);
      case 'version':
      case '--version':
        if (rest.length > 0) {
          printErrors(io, [`"${first}" takes no arguments, got "${rest.join(' ')}"`]);
          return 1;
        }
        io.stdout(`cloud-route-controller ${VERSION}\n`);
        return 0;
      case 'help':
        io.stdout(usage(rest[0] === 'run' || rest[0] === 'plan' ? rest[0] : undefined));
        return 0;
      case '-h':
      case '--help':
        io.stdout(usage(undefined));
        return 0;
      default:
        if (first !== undefined && !first.startsWith('-')) {
          printErrors(io, [`unknown command "${first}" for "cloud-route-controller"`]);
          return 1;
        }
        return await (await import('./run.ts')).runDaemon(argv, io);
    }
  } catch (err) {
    // Never a stack trace on the terminal (R60); the message says what failed.
    printErrors(io, [err instanceof Error ? err.message : String(err)]);
    return 1;
  }
}

if (import.meta.main) {
  process.exit(await main(process.argv.slice(2)));
}
