// Where the CLI writes and what it reads from its process; injectable so the
// commands run in-process in tests.
import { readFile } from 'node:fs/promises';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly readFile: (path: string) => Promise<string>;
  /** Immediate exit (second signal, lost leadership); never returns in production. */
  readonly exit: (code: number) => void;
  readonly onSignal: (handler: (signal: NodeJS.Signals) => void) => () => void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export function processIO(): CliIO {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    readFile: (p) => readFile(p, 'utf8'),
    exit: (code) => process.exit(code),
    onSignal: (handler) => {
      for (const s of SIGNALS) process.on(s, handler);
      return () => {
        for (const s of SIGNALS) process.off(s, handler);
      };
    },
  };
}

/**
 * R60: every problem on its own line, `error: <message>`. A multi-line cause
 * (a YAML parser's code frame) is folded into that line: a line that does not
 * start with `error:` reads as a second problem or a stray stack trace.
 */
export function printErrors(io: CliIO, errors: readonly string[]): void {
  io.stderr(errors.map((e) => `error: ${oneLine(e)}\n`).join(''));
}

function oneLine(message: string): string {
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
}
