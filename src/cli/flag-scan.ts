// The daemon's command line split into raw values per flag, as pflag reads it: `--name value`,
// `--name=value`, shorthands, bools without a value, and the CCM's flags that do not concern
// routes consumed and listed (R120). The values are parsed in flags.ts.
import { CCM_IGNORED_FLAGS } from './ccm-flags.ts';
import { FLAGS, FLAGS_BY_NAME } from './flag-table.ts';

export interface ScannedFlags {
  /** Values per flag name, in command-line order (the last wins; gates accumulate). */
  readonly raw: Map<string, string[]>;
  readonly help: boolean;
  /** CCM flags accepted and ignored, `--name` once each. */
  readonly ignored: string[];
}

/** Splits argv into raw values per flag; a problem goes to `errors`. */
export function scanFlags(argv: readonly string[], errors: string[]): ScannedFlags {
  const raw = new Map<string, string[]>();
  const ignored: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      for (const rest of argv.slice(i + 1)) errors.push(`unexpected argument "${rest}"`);
      break;
    }
    const named = splitArg(arg, errors);
    if (named === undefined) continue;
    const { name } = named;
    let { value } = named;
    if (name === 'help') {
      help = true;
      continue;
    }
    const spec = FLAGS_BY_NAME.get(name);
    const ccmKind = CCM_IGNORED_FLAGS[name];
    if (!spec && ccmKind !== undefined) {
      // R120: consumed as pflag would, so the next flag is not taken for its value.
      if (value === undefined && ccmKind === 'value') {
        if (i + 1 < argv.length) i++;
        else errors.push(`flag needs an argument: --${name}`);
      }
      if (!ignored.includes(`--${name}`)) ignored.push(`--${name}`);
      continue;
    }
    if (!spec) {
      errors.push(`unknown flag: --${name}`);
      continue;
    }
    if (value === undefined) {
      if (spec.kind === 'bool') value = 'true';
      else if (i + 1 < argv.length) value = argv[++i]!;
      else {
        errors.push(`flag needs an argument: --${name}`);
        continue;
      }
    }
    const list = raw.get(name) ?? [];
    list.push(value);
    raw.set(name, list);
  }
  return { raw, help, ignored };
}

/**
 * The flag name of one argument and its `=value` (or, for a shorthand, the rest of it);
 * `-h` is `help`. Undefined, with the problem in `errors`, for what is no flag.
 */
function splitArg(arg: string, errors: string[]): { name: string; value: string | undefined } | undefined {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return { name: eq < 0 ? arg.slice(2) : arg.slice(2, eq), value: eq < 0 ? undefined : arg.slice(eq + 1) };
  }
  if (!(arg.startsWith('-') && arg.length > 1)) {
    errors.push(`unexpected argument "${arg}"`);
    return undefined;
  }
  // pflag shorthands: -v 4, -v=4, -v4, -h.
  const short = arg[1]!;
  const spec = FLAGS.find((f) => f.shorthand === short);
  if (short === 'h' && arg.length === 2) return { name: 'help', value: undefined };
  if (!spec) {
    errors.push(`unknown shorthand flag: '${short}' in ${arg}`);
    return undefined;
  }
  const rest = arg.slice(2);
  return { name: spec.name, value: rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest };
}
