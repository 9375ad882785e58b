import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { loadConfig } from '../../src/config/config-loader.js';
import { parseCommandFile, parseSkillMd } from '@skillhost/core';
import { freePort } from '../support/ports.js';
import { type AgentName, type DocBlock, matchesExpected, rewriteAddresses, splitShellSteps } from './doc-blocks.js';

/** The commands run in this checkout, as a reader's would (`npx skillhost` needs the package's own folder). */
export const REPO = resolve('.');
const STEP_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 90_000;
/** A command slower than this is named in the output, so a slow example is found. */
const SLOW_STEP_MS = 3_000;

export interface StepFailure {
  block: DocBlock;
  line: number;
  message: string;
}

/** A bash session that runs a file's shell blocks in order: variables (KEY, CHAT…) carry over. */
export class ShellSession {
  private readonly child: ChildProcess;
  private stdout = '';
  private steps = 0;
  private readonly dir: string;

  constructor(cwd: string, env: NodeJS.ProcessEnv, scratch: string) {
    this.dir = scratch;
    mkdirSync(scratch, { recursive: true });
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
  }

  /** Runs one command as if typed; answers what it printed (stdout and stderr, in order) and its exit status. */
  async run(command: string): Promise<{ output: string; exitCode: number }> {
    const n = ++this.steps;
    const [script, out] = [join(this.dir, `step-${n}.sh`), join(this.dir, `step-${n}.out`)];
    writeFileSync(script, `${command}\n`);
    const done = `__docs_step_${n}__`;
    this.child.stdin!.write(`source ${script} > ${out} 2>&1 < /dev/null; echo "${done} $?"\n`);
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    const marker = new RegExp(`${done} (\\d+)`);
    while (!marker.test(this.stdout)) {
      if (this.child.exitCode !== null)
        throw new Error(`the shell exited (status ${this.child.exitCode}): a command ran \`exit\`?`);
      if (Date.now() > deadline) throw new Error(`still running after ${STEP_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { output: readFileSync(out, 'utf8'), exitCode: Number(marker.exec(this.stdout)![1]) };
  }

  close(): void {
    this.child.stdin!.end();
    this.child.kill();
  }
}

/** A server started by a `server` block, in the background, as a reader's terminal would run it. */
export class DocServer {
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
  }

  /**
   * Runs the block's command with `npm start` replaced by what it runs after the build (the test
   * builds once), on a free port and the file's database, and waits until `/health/ready` is 200.
   */
  static async start(command: string, cwd: string, env: NodeJS.ProcessEnv, modelUrl: string): Promise<DocServer> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const line = rewriteAddresses(command, { server: url, model: modelUrl }).replace(
      /\bnpm (run )?start\b/,
      `node ${join(REPO, 'dist/src/main.js')}`,
    );
    const child = spawn('bash', ['-c', line], {
      cwd,
      env: { ...env, SKILLHOST_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const server = new DocServer(child, url);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`the server exited (status ${child.exitCode}) before it was ready:\n${server.output}`);
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`the server was not ready within ${START_TIMEOUT_MS / 1000} s:\n${server.output}`);
      }
      const ready = await fetch(`${url}/health/ready`).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ready) return server;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  log(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    process.kill(-this.child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-this.child.pid!, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/** What `output` looks like when the server answered an error body nobody said to expect. */
const ERROR_BODY = /"code":"[A-Z_]+","message":/;

/** Runs a shell block's commands in the session; every problem is one failure naming the block's line. */
export async function runShellBlock(
  block: DocBlock,
  session: ShellSession,
  server: DocServer | undefined,
  modelUrl: string,
): Promise<StepFailure[]> {
  const failures: StepFailure[] = [];
  const steps = splitShellSteps(block.text);
  for (const step of steps) {
    const line = block.line + step.line;
    if (server === undefined && /\b(127\.0\.0\.1|localhost):3000\b/.test(step.command)) {
      failures.push({
        block,
        line,
        message: 'no server is running: start one with a `<!-- docs-test: server -->` block earlier in this file',
      });
      break;
    }
    const started = Date.now();
    const { output, exitCode } = await session.run(
      server === undefined ? step.command : rewriteAddresses(step.command, { server: server.url, model: modelUrl }),
    );
    const shown = `$ ${step.command}\n${output}`;
    if (Date.now() - started > SLOW_STEP_MS)
      process.stdout.write(`${block.file}:${line} took ${Date.now() - started} ms\n`);
    if (exitCode !== step.exitCode)
      failures.push({ block, line, message: `exited ${exitCode}, expected ${step.exitCode}:\n${shown}` });
    else if (step.expected.length > 0 && !matchesExpected(step.expected, output)) {
      failures.push({
        block,
        line,
        message: `printed something else than the block shows.\nexpected:\n${step.expected.join('\n')}\n${shown}`,
      });
    } else if (step.expected.length === 0 && ERROR_BODY.test(output)) {
      failures.push({
        block,
        line,
        message: `answered an error the block does not show (add it as \`# → …\` if it is meant):\n${shown}`,
      });
    }
  }
  return failures;
}

/** Runs a GraphQL block against the live server: it must answer without errors, and as its `# →` lines say. */
export async function runGraphqlBlock(block: DocBlock, server: DocServer | undefined): Promise<string | undefined> {
  if (server === undefined) return 'no server is running for this GraphQL block';
  const expected = block.text
    .split('\n')
    .map((line) => /^#\s*→\s?(.*)$/.exec(line.trim())?.[1])
    .filter((line): line is string => line !== undefined);
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: block.text }),
  });
  const text = await res.text();
  if (res.status !== 200 || 'errors' in JSON.parse(text)) return `answered ${res.status}: ${text}`;
  if (expected.length > 0 && !matchesExpected(expected, text))
    return `answered something else than the block shows.\nexpected:\n${expected.join('\n')}\ngot:\n${text}`;
  return undefined;
}

/**
 * Checks a block that needs no server: a config, a SKILL.md, a command file, an agent's settings, a script's syntax.
 */
export function checkStaticBlock(block: DocBlock, scratch: string): string | undefined {
  try {
    switch (
      block.directive?.kind === 'agent-config'
        ? 'agent-config'
        : block.directive?.kind === 'skill' || block.directive?.kind === 'command'
          ? block.directive.kind
          : block.lang
    ) {
      case 'toml':
        loadConfig({ toml: parseToml(block.text), env: {}, projectRoot: scratch, homeDir: scratch });
        return undefined;
      case 'json':
        JSON.parse(block.text);
        return undefined;
      case 'yaml':
      case 'yml':
        parseYaml(block.text);
        return undefined;
      case 'skill':
        return checkSkillMd(block.text);
      case 'command': {
        const name = block.directive?.kind === 'command' ? block.directive.name : '';
        const verdict = parseCommandFile(name, block.text);
        return verdict.ok ? undefined : `the command file ${name}.md is invalid: ${verdict.errors.join('; ')}`;
      }
      case 'agent-config':
        return checkAgentConfig(block.directive?.kind === 'agent-config' ? block.directive.agent : 'codex', block.text);
      case 'js':
      case 'mjs':
      case 'javascript': {
        const file = join(scratch, `block-${block.line}.mjs`);
        writeFileSync(file, block.text);
        const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
        return check.status === 0 ? undefined : check.stderr;
      }
      default:
        return `no check for a ${block.lang} block`;
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function checkSkillMd(text: string): string | undefined {
  const name = /^name:\s*(\S+)/m.exec(text)?.[1] ?? '';
  const parsed = parseSkillMd(text, name, 'strict');
  if (!parsed.ok) return `the SKILL.md is invalid: ${parsed.errors.join('; ')}`;
  return parsed.warnings.length > 0 ? `the SKILL.md has warnings: ${parsed.warnings.join('; ')}` : undefined;
}

/** The MCP server entry of an agent's configuration, as that agent reads it: its URL and the fields it needs. */
export function mcpUrlOf(agent: AgentName, text: string): string {
  const entryOf = (servers: unknown, where: string): Record<string, unknown> => {
    if (servers === null || typeof servers !== 'object') throw new Error(`${where} is missing`);
    const entry = (servers as Record<string, unknown>).skillhost;
    if (entry === null || typeof entry !== 'object') throw new Error(`${where}.skillhost is missing`);
    return entry as Record<string, unknown>;
  };
  const stringAt = (entry: Record<string, unknown>, key: string, where: string): string => {
    if (typeof entry[key] !== 'string' || entry[key] === '') throw new Error(`${where}.${key} must be a string`);
    return entry[key];
  };
  switch (agent) {
    case 'codex': {
      // ~/.codex/config.toml: a streamable HTTP server is `url`, its key from `bearer_token_env_var`.
      const entry = entryOf(parseToml(text).mcp_servers, 'mcp_servers');
      stringAt(entry, 'bearer_token_env_var', 'mcp_servers.skillhost');
      return stringAt(entry, 'url', 'mcp_servers.skillhost');
    }
    case 'claude': {
      // .mcp.json: `type: "http"` with `url` and `headers` (`${VAR}` is expanded).
      const entry = entryOf((JSON.parse(text) as Record<string, unknown>).mcpServers, 'mcpServers');
      if (entry.type !== 'http') throw new Error('mcpServers.skillhost.type must be "http"');
      return stringAt(entry, 'url', 'mcpServers.skillhost');
    }
    case 'gemini': {
      // settings.json: streamable HTTP is `url` with `type: "http"` (as `gemini mcp add --transport http` writes it),
      // or the older `httpUrl`.
      const entry = entryOf((JSON.parse(text) as Record<string, unknown>).mcpServers, 'mcpServers');
      if (entry.httpUrl !== undefined) return stringAt(entry, 'httpUrl', 'mcpServers.skillhost');
      if (entry.type !== 'http') throw new Error('mcpServers.skillhost.type must be "http" (without it, `url` is SSE)');
      return stringAt(entry, 'url', 'mcpServers.skillhost');
    }
    case 'opencode': {
      // opencode.json: a `remote` server with `url`; `{env:VAR}` is expanded in `headers`.
      const entry = entryOf((JSON.parse(text) as Record<string, unknown>).mcp, 'mcp');
      if (entry.type !== 'remote') throw new Error('mcp.skillhost.type must be "remote"');
      return stringAt(entry, 'url', 'mcp.skillhost');
    }
    case 'goose': {
      const entry = entryOf((parseYaml(text) as Record<string, unknown>).extensions, 'extensions');
      if (entry.type !== 'streamable_http') throw new Error('extensions.skillhost.type must be "streamable_http"');
      return stringAt(entry, 'uri', 'extensions.skillhost');
    }
  }
}

function checkAgentConfig(agent: AgentName, text: string): string | undefined {
  const url = new URL(mcpUrlOf(agent, text));
  return url.pathname === '/mcp' ? undefined : `the MCP URL ${url} does not end in /mcp`;
}

/** Whether the server answers an MCP `initialize` at the agent configuration's URL (rewritten to the live server). */
export async function initializeMcp(
  agent: AgentName,
  text: string,
  server: DocServer,
  modelUrl: string,
): Promise<string | undefined> {
  const url = rewriteAddresses(mcpUrlOf(agent, text), { server: server.url, model: modelUrl });
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'docs-test', version: '1' } },
    }),
  });
  const body = await res.text();
  return res.status === 200 && body.includes('"serverInfo"')
    ? undefined
    : `MCP initialize at ${url} answered ${res.status}: ${body.slice(0, 500)}`;
}
