import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { createTestDatabase } from '../support/database.js';
import { buildServer } from '../support/instances.js';
import { runFolder } from '../support/files/run-folder.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { type DocBlock, extractBlocks, runnerOf, splitShellSteps } from './doc-blocks.js';
import { answerAsTheDocsShow } from './doc-model.js';
import {
  checkStaticBlock,
  DocServer,
  initializeMcp,
  REPO,
  runGraphqlBlock,
  runShellBlock,
  ShellSession,
  type StepFailure,
} from './doc-runner.js';

/**
 * Every fenced block of README.md and docs/*.md runs here, so the docs cannot drift from the code:
 * shell blocks in order, per file, in one bash session against a real server process that a
 * `server` block starts (its `npm start` is the built `node dist/src/main.js`), with
 * `http://127.0.0.1:3000` rewritten to the live address and a local Ollama's URL to a scripted
 * model; GraphQL blocks against that server; TOML through the config loader; SKILL.md and command
 * files through their parsers; agents' MCP settings checked for the fields each agent reads and
 * against the live /mcp; TypeScript type-checked against the built package. How to mark a block:
 * test/docs/doc-blocks.ts.
 */
const DOC_FILES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const BLOCKS = DOC_FILES.flatMap((file) => extractBlocks(file, readFileSync(file, 'utf8')));
const LIVE = new Set(['server', 'shell', 'graphql']);
const STATIC = new Set(['toml', 'json', 'yaml', 'javascript', 'skill', 'command', 'agent-config']);

const where = (block: DocBlock, line = block.line): string => `${block.file}:${line}`;
const format = (failure: StepFailure): string => `${where(failure.block, failure.line)}: ${failure.message}`;

describe('the examples in README.md and docs/', () => {
  let model: ScriptedModelServer;
  const root = runFolder('docs-examples');

  beforeAll(async () => {
    buildServer();
    mkdirSync(root, { recursive: true });
    model = await new ScriptedModelServer().start();
    model.answerWith(answerAsTheDocsShow);
  }, 180_000);
  afterAll(async () => {
    await model?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('gives every block a way to run, or a reason why it cannot run here', () => {
    const unrunnable = BLOCKS.filter(
      (block) =>
        block.directiveError !== undefined || (runnerOf(block) === undefined && block.directive?.kind !== 'not-run'),
    );
    expect(
      unrunnable.map(
        (block) =>
          `${where(block)}: ` +
          `${
            block.directiveError ??
            `a \`${block.lang || 'plain'}\` block no runner takes; mark it <!-- docs-test: not run: REASON --> ` +
              `or give it a language the test runs`
          }`,
      ),
    ).toEqual([]);
    const notRun = BLOCKS.filter((block) => block.directive?.kind === 'not-run');
    process.stdout.write(
      `\nDoc blocks not run here (${notRun.length} of ` +
        `${BLOCKS.length}):` +
        `\n${notRun
          .map((block) => `  ${where(block)}: ${block.directive?.kind === 'not-run' ? block.directive.reason : ''}`)
          .join('\n')}\n`,
    );
  });

  it('has tools the shell blocks use', () => {
    for (const tool of ['curl', 'jq']) expect(() => execFileSync('sh', ['-c', `command -v ${tool}`])).not.toThrow();
  });

  it('holds configurations, skills, commands, agent settings and scripts that their readers accept', () => {
    const scratch = mkdtempSync(join(root, 'static-'));
    const problems = BLOCKS.filter((block) => STATIC.has(runnerOf(block) ?? ''))
      .map((block) => [block, checkStaticBlock(block, scratch)] as const)
      .filter(([, problem]) => problem !== undefined)
      .map(([block, problem]) => `${where(block)}: ${problem}`);
    expect(problems).toEqual([]);
  });

  it('holds TypeScript that type-checks against the built package', () => {
    const blocks = BLOCKS.filter((block) => runnerOf(block) === 'typescript');
    // Inside the repository, so `skillhost/nest` resolves to this package's own exports (dist/).
    mkdirSync(resolve('.scratch'), { recursive: true });
    const dir = mkdtempSync(resolve('.scratch/docs-ts-'));
    try {
      const files = blocks.map((block) => {
        const file = join(dir, `${block.file.replace(/\W/g, '_')}_${block.line}.ts`);
        writeFileSync(file, `${block.text}\nexport {};\n`);
        return file;
      });
      const problems = typeErrors(files).map((problem) => {
        const block = blocks[files.indexOf(problem.file)];
        return block === undefined
          ? `${problem.file}:${problem.line}: ${problem.message}`
          : `${where(block, block.line + problem.line)}: ${problem.message}`;
      });
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  const liveFiles = DOC_FILES.filter((file) =>
    BLOCKS.some((block) => block.file === file && LIVE.has(runnerOf(block) ?? '')),
  );
  it.each(liveFiles)(
    '%s: its commands print what it shows, run in order against a live server',
    async (file) => {
      const db = await createTestDatabase();
      const dir = mkdtempSync(join(root, `${file.replace(/\W/g, '_')}-`));
      const home = join(dir, 'home');
      mkdirSync(home);
      // A home of its own, so `~/.agents/skills` is empty, but npm's own cache, where `npx skillhost`
      // keeps its link to this package once made; npm's notices would be part of the output.
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        LANG: 'C.UTF-8',
        DATABASE_URL: db.url,
        NPM_CONFIG_CACHE: process.env.npm_config_cache ?? join(homedir(), '.npm'),
        NPM_CONFIG_UPDATE_NOTIFIER: 'false',
        NPM_CONFIG_FUND: 'false',
      };
      const leftBefore = untrackedFiles();
      const session = new ShellSession(REPO, env, join(dir, 'steps'));
      let server: DocServer | undefined;
      const failures: StepFailure[] = [];
      try {
        for (const block of BLOCKS.filter((b) => b.file === file)) {
          const runner = runnerOf(block);
          if (runner === 'server') {
            await server?.stop();
            server = undefined;
            const steps = splitShellSteps(block.text);
            if (steps.length !== 1)
              failures.push({ block, line: block.line, message: 'a server block holds exactly one command' });
            else
              server = await DocServer.start(steps[0].command, REPO, env, model.url).catch((error: Error) => {
                failures.push({ block, line: block.line, message: error.message });
                return undefined;
              });
          } else if (runner === 'shell') failures.push(...(await runShellBlock(block, session, server, model.url)));
          else if (runner === 'graphql') {
            const problem = await runGraphqlBlock(block, server);
            if (problem !== undefined) failures.push({ block, line: block.line, message: problem });
          } else if (runner === 'agent-config' && server !== undefined && block.directive?.kind === 'agent-config') {
            const problem = await initializeMcp(block.directive.agent, block.text, server, model.url);
            if (problem !== undefined) failures.push({ block, line: block.line, message: problem });
          }
        }
      } finally {
        session.close();
        await server?.stop();
        await db.drop();
      }
      expect(failures.map(format)).toEqual([]);
      // The examples run in this checkout: what they leave behind would be left in a reader's.
      expect(untrackedFiles().filter((file) => !leftBefore.includes(file))).toEqual([]);
    },
    600_000,
  );
});

/** Files git does not know and does not ignore. */
function untrackedFiles(): string[] {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('??'))
    .map((line) => line.slice(3));
}

/** Type errors of `files` as the project's compiler options see them (unused names allowed: examples are excerpts). */
function typeErrors(files: string[]): { file: string; line: number; message: string }[] {
  const config = ts.readConfigFile(resolve('tsconfig.json'), (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, resolve('.'));
  // A self-import (`skillhost/nest`) is type-checked from the packages' sources, which reference their own
  // declarations of untyped packages.
  const program = ts.createProgram(files, {
    ...parsed.options,
    noEmit: true,
    noUnusedLocals: false,
    noUnusedParameters: false,
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const file = diagnostic.file?.fileName ?? '';
    const line =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1
        : 0;
    return {
      file: files.find((f) => resolve(f) === resolve(file)) ?? file,
      line,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    };
  });
}
