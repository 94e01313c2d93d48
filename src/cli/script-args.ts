// The command line of the project's standalone programs (bench, soak, the
// scripts a user runs): `--help` prints the usage and exits 0; a bad flag or
// value prints one `error:` line and exits 2, the usual code for a misuse of a
// command; never a stack trace. The daemon's own command line (R60) is
// src/cli/flags.ts and exits 1 as documented.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Exit code of a misused command line (as getopt-based tools and Go's flag package use). */
export const USAGE_ERROR = 2;

/** Prints one `error:` line naming where help is, and exits with USAGE_ERROR. */
export function usageError(message: string): never {
  process.stderr.write(`error: ${message} (see --help)\n`);
  process.exit(USAGE_ERROR);
}

/**
 * parseArgs over process.argv with --help and one-line errors. `usage` is the
 * whole help text; the first `--` ends the flags, so a `--help` after it is an argument.
 */
export function parseCommandLine<T extends ParseArgsConfig>(
  usage: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  const end = args.indexOf('--');
  const flags = end === -1 ? args : args.slice(0, end);
  if (flags.includes('--help') || flags.includes('-h')) {
    process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`);
    process.exit(0);
  }
  try {
    return parseArgs<T>({ ...config, args });
  } catch (err) {
    // parseArgs' errors (ERR_PARSE_ARGS_*) are about the command line; their message says which flag.
    return usageError(err instanceof Error ? err.message : String(err));
  }
}
