import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgresServer } from '../src/persistence/embedded-postgres.server.js';

/** What the benchmarks share: child processes that serve, a database of their own, and percentiles. */

/** A fresh database on DATABASE_URL's server, or on an embedded PostgreSQL started for the run. */
export async function databaseUrl(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = join(tmpdir(), 'skillhost-bench-pg');
  let base = process.env.DATABASE_URL;
  let embedded: EmbeddedPostgresServer | undefined;
  if (!base) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    embedded = new EmbeddedPostgresServer({ dataDir: join(dir, 'data'), port: 54340 });
    base = await embedded.start();
  }
  const name = `skillhost_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    stop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await embedded?.stop();
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Child mode `serve-app`: the real application from its config file (SKILLHOST_CONFIG), on a free port it prints as `READY <port>`. */
export async function serveApp(): Promise<void> {
  const { loadConfig } = await import('../src/config/config-loader.js');
  const { createApp } = await import('../src/app.factory.js');
  const app = await createApp(loadConfig(), { logger: false });
  await app.listen(0, '127.0.0.1');
  console.log(`READY ${(app.getHttpServer().address() as { port: number }).port}`);
}

/** Runs `script` with `args` in a child Node process and waits for the `READY <port>` line it prints. */
export function startChild(script: string, args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolvePort, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /READY (\d+)/.exec(chunk.toString());
      if (match) resolvePort({ child, port: Number(match[1]) });
    });
    child.on('exit', (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}
