import { runCli } from '../../src/cli/skillhost.js';
import type { CliResult } from './run-cli.js';

/**
 * `skillhost login --server BASE --oauth --no-browser …` run in-process, as a person at a terminal would start it:
 * `address` is the sign-in URL once the CLI prints it (empty when it ended first), `result` the command's end.
 */
export function startOAuthLogin(
  base: string,
  where: { cwd: string; env: Record<string, string>; home: string },
  ...args: string[]
): { address: Promise<string>; result: Promise<CliResult> } {
  const out: string[] = [];
  const err: string[] = [];
  let printed: (url: string) => void = () => {};
  const address = new Promise<string>((resolve) => {
    printed = resolve;
  });
  const io = {
    ...where,
    out: (line: string) => out.push(line),
    err: (line: string) => {
      err.push(line);
      if (line.startsWith(`${base}/oauth/authorize?`)) printed(line);
    },
  };
  const result = runCli(['login', '--server', base, '--oauth', '--no-browser', ...args], io).then(
    (code): CliResult => ({ code, out: out.join('\n'), err: err.join('\n') }),
  );
  // A login that fails before printing must not leave the caller waiting for the address.
  void result.then(() => printed(''));
  return { address, result };
}
