import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { CLAUDE, QUIET_ENV } from './clients/claude-code.js';
import { type CliRun, runCli } from './clients/cli-run.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import {
  AnthropicProvider,
  lastToolResult,
  loadedTools,
  type MessagesRequest,
  shownToModel,
} from './providers/anthropic.js';
import { mentions, stringsIn } from './providers/recording-server.js';

const TIMEOUT_MS = 120_000;
/** The `skillhost` command as a user runs it: the built CLI (startAgentSkillhost builds dist/ first). */
const SKILLHOST_BIN = resolve(process.cwd(), 'bin', 'skillhost.js');
const SKILL = 'internal-comms';
const ANSWER = 'Here is the 3P update.';
/** Where Claude Code lists its skills for the model: a system turn among the first messages, not a tool. */
const LISTING = 'The following skills are available for use with the Skill tool:\n';

/**
 * A line of a corpus file's text to look for in what the model was sent: the first long line after
 * the frontmatter, up to a quote or backslash.
 */
function lineOf(...path: string[]): string {
  const text = readFileSync(corpusPath(...path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  const line = text
    .split('\n')
    .map((candidate) => candidate.split(/["\\]/)[0].trim())
    .find((candidate) => candidate.length >= 30);
  if (line === undefined) throw new Error(`No line of ${path.join('/')} to look for`);
  return line;
}

/** The text of Claude Code's skill listing in a request (from LISTING to the end of that text block). */
function skillListing(request: MessagesRequest): string | undefined {
  const text = stringsIn(request.messages).find((candidate) => candidate.includes(LISTING));
  return text?.slice(text.indexOf(LISTING) + LISTING.length);
}

/**
 * The proof with a real client and no MCP server: `skillhost sync --target claude --project`,
 * run in a project folder with the member's key, writes the skills the member may see into
 * `.claude/skills`; the Skillhost is then stopped, and Claude Code, run headless in that folder with
 * no MCP server configured, offers the synced skills to the model as its own and loads one when the
 * model calls its Skill tool.
 */
describe('Claude Code with skills from `skillhost sync --target claude --project` (no MCP server)', () => {
  let skillhost: AgentSkillhost | undefined;
  let served: AgentSkillhost['skills'];
  let home: string;
  let project: string;
  let synced: CliRun;
  let provider: AnthropicProvider;
  let result: CliRun;
  let requests: MessagesRequest[];

  beforeAll(
    async () => {
      home = mkdtempSync(join(tmpdir(), 'claude-sync-home-'));
      project = mkdtempSync(join(tmpdir(), 'claude-sync-project-'));
      const path = `${dirname(CLAUDE)}:${process.env.PATH ?? '/usr/bin:/bin'}`;
      skillhost = await startAgentSkillhost();
      served = skillhost.skills;
      synced = await runCli(
        process.execPath,
        [SKILLHOST_BIN, 'sync', '--server', skillhost.baseUrl, '--target', 'claude', '--project'],
        { cwd: project, env: { PATH: path, HOME: home, SKILLHOST_API_KEY: skillhost.key }, timeoutMs: TIMEOUT_MS },
      );
      // Claude Code runs on the synced folder alone: the server is gone before it starts.
      await skillhost.stop();
      skillhost = undefined;
      provider = await new AnthropicProvider((_request, turn) =>
        turn === 0 ? { toolCall: { name: 'Skill', arguments: { skill: SKILL } } } : { text: ANSWER },
      ).start();
      try {
        result = await runCli(CLAUDE, ['-p', 'Write a 3P update for the data team about the Q3 launch.'], {
          cwd: project,
          env: {
            PATH: path,
            HOME: home,
            LANG: 'C.UTF-8',
            TERM: 'dumb',
            ANTHROPIC_BASE_URL: provider.url,
            ANTHROPIC_API_KEY: 'sk-ant-scripted',
            ...QUIET_ENV,
          },
          timeoutMs: TIMEOUT_MS,
        });
        requests = provider.modelRequests;
      } finally {
        await provider.stop();
      }
    },
    300_000 + 2 * TIMEOUT_MS,
  );

  afterAll(async () => {
    await skillhost?.stop();
    for (const folder of [home, project]) if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  it("syncs every skill the member may see into the project's .claude/skills, with a skills-lock.json", () => {
    expect(synced).toMatchObject({ code: 0, timedOut: false });
    const skills = join(project, '.claude', 'skills');
    expect(served.map((skill) => skill.name)).toContain(SKILL);
    for (const { name } of served) {
      expect(synced.stdout).toContain(`add ${name}`);
      expect(existsSync(join(skills, name, 'SKILL.md'))).toBe(true);
    }
    expect(readFileSync(join(skills, SKILL, 'SKILL.md'), 'utf8')).toBe(
      readFileSync(corpusPath('anthropics-skills', SKILL, 'SKILL.md'), 'utf8'),
    );
    expect(Object.keys(JSON.parse(readFileSync(join(skills, 'skills-lock.json'), 'utf8')))).not.toHaveLength(0);
    expect(existsSync(join(home, '.claude', 'skills'))).toBe(false);
  });

  it('runs with no MCP server: no `mcp__` tool and no MCP server instructions in the first request', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect((requests[0].tools ?? []).map((tool) => tool.name).filter((name) => name.startsWith('mcp__'))).toEqual([]);
    expect(mentions(requests[0].messages, '# MCP Server Instructions')).toBe(false);
  });

  it(
    "lists every synced skill as `- <name>: <description>` in the first request's skill listing (a system turn), " +
      "not in the Skill tool's description",
    () => {
      const skillTool = loadedTools(requests[0]).find((tool) => tool.name === 'Skill');
      expect(skillTool?.description).toMatch(/^Invoke a skill\./);
      const listing = skillListing(requests[0]);
      expect(listing).toBeDefined();
      for (const { name, description } of served) {
        expect({
          skill: name,
          // The listing starts with a blank line, so every entry is a whole line.
          listed: listing?.includes(`\n- ${name}: ${description}\n`),
        }).toEqual({ skill: name, listed: true });
        expect(skillTool?.description).not.toContain(description);
      }
    },
  );

  it(
    'loads the synced SKILL.md when the model calls Skill {"skill": "internal-comms"} (no permission rule needed ' +
      'headless): the next request holds its body, from the project folder',
    () => {
      expect(provider.failures).toEqual([]);
      expect(requests).toHaveLength(2);
      const after = requests[1];
      expect(lastToolResult(after)).toBe(`Launching skill: ${SKILL}`);
      expect(mentions(shownToModel(after), lineOf('anthropics-skills', SKILL, 'SKILL.md'))).toBe(true);
      expect(
        mentions(after.messages, `Base directory for this skill: ${join(project, '.claude', 'skills', SKILL)}`),
      ).toBe(true);
      expect(mentions(requests[0].messages, lineOf('anthropics-skills', SKILL, 'SKILL.md'))).toBe(false);
    },
  );

  it("prints the model's final answer", () => {
    expect(result).toMatchObject({ code: 0, timedOut: false });
    expect(result.stdout.trim()).toBe(ANSWER);
  });
});
