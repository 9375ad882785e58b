import type { CliInput } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/skillhost.js';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs the CLI in-process, as `skillhost ARGV` in `cwd` with only `env` in its environment (and `home` as the home
 * folder, `stdin` as its standard input).
 */
export async function run(
  argv: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
  home?: string,
  stdin?: CliInput,
): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), cwd, env, home, stdin });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
