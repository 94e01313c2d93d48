// Runs one in-process cost measurement in a fresh process and prints it as
// JSON: sizes measured one after another in one process inherit the heap of
// the earlier ones, whose garbage collection then lands in the later sizes'
// numbers (15,000 nodes measured 5.5× its 5,000-node cost that way, 2.4× alone).
import { eventCost } from './event-cost.ts';
import { reconcileCost } from './reconcile-cost.ts';

const [what, ...rest] = process.argv.slice(2);
const num = (i: number): number => Number(rest[i]);
const out =
  what === 'reconcile'
    ? await reconcileCost(num(0), num(1), num(2))
    : what === 'event'
      ? await eventCost(num(0), rest[1] === 'true', num(2))
      : undefined;
if (out === undefined) {
  process.stderr.write(
    'usage: cost-child.ts reconcile <nodes> <change> <iterations> | event <nodes> <incremental> <samples>\n',
  );
  process.exit(2);
}
process.stdout.write(JSON.stringify(out));
