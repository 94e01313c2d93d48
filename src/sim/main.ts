// Runs the simulator directly: `npx node src/sim/main.ts [flags]`.
import { main } from './cli.ts';

process.exitCode = await main(process.argv.slice(2));
