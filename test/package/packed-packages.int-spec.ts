import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { buildServer } from '../support/instances.js';

/**
 * Skillhost as a library: `npm pack` makes the tarball an app installs, and the example app in
 * examples/nest-chat installs it into its own node_modules (its other dependencies resolve from
 * the repository's). The example is then type-checked against the packed type declarations, and
 * its own jest suite runs: its chat against a scripted model, and the package's public surface.
 */
const ROOT = resolve('.');
const EXAMPLE = join(ROOT, 'examples', 'nest-chat');
const INSTALLED = join(EXAMPLE, 'node_modules', 'skillhost');

describe('the packed package, installed into examples/nest-chat', () => {
  let packDir: string;
  let tarball: string;
  let files: string[];
  let database: TestDatabase;

  beforeAll(async () => {
    buildServer();
    packDir = mkdtempSync(join(tmpdir(), 'skillhost-pack-'));
    // The build is fresh (above): packing runs no script, as `npm publish` after a build would not need to.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as { filename: string; files: { path: string }[] }[];
    tarball = join(packDir, packed[0].filename);
    files = packed[0].files.map((f) => f.path);
    rmSync(INSTALLED, { recursive: true, force: true });
    mkdirSync(INSTALLED, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', INSTALLED, '--strip-components=1']);
    database = await createTestDatabase();
  }, 180_000);
  afterAll(async () => {
    rmSync(packDir, { recursive: true, force: true });
    await database?.drop();
  });

  it('holds the built code with its types, the README and the licence, and no tests, fixtures, sources or benchmarks', () => {
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/nest.js', 'dist/src/nest.d.ts', 'dist/src/ai-sdk.js', 'dist/src/ai-sdk.d.ts', 'dist/src/main.js', 'bin/skillhost.js']));
    expect(files.filter((f) => /^(test|src|bench|examples|\.ci|tools)\//.test(f) || /^dist\/(test|bench)\//.test(f) || /\.(map|spec\.js)$/.test(f))).toEqual([]);
  });

  it('the example type-checks against the packed type declarations', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', join(EXAMPLE, 'tsconfig.json')], { cwd: EXAMPLE, encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);

  it("the example's own suite passes: /skills-system-validation activates, the cards come back, a path escape is refused, and the public surface", () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--runInBand', '--ci', '--config', join(EXAMPLE, 'jest.config.js'), '--rootDir', EXAMPLE], {
      cwd: EXAMPLE,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules', DATABASE_URL: database.url },
    });
    const output = run.stdout + run.stderr;
    // On failure the example's own report is what shows.
    expect({ status: run.status, failed: output.includes('FAIL') ? output : '' }).toEqual({ status: 0, failed: '' });
    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/skipped/);
  }, 240_000);
});
