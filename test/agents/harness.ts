import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { corpusPath } from '../support/files/corpus.js';
import { buildServer, type Instances, startInstances } from '../support/instances.js';

/**
 * A fresh Skillhost for one real-agent run: the built server on 127.0.0.1 with API keys required
 * (`app.auth.mode = "api_key"`), a skills folder holding a few skills of the real-world corpus
 * (among them `internal-comms`, whose `examples/3p-updates.md` is a non-SKILL.md file to read),
 * one member with a working key, a key that was revoked, and a key that never existed.
 */
export interface AgentSkillhost {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** `http://127.0.0.1:<port>/mcp`. */
  mcpUrl: string;
  /** A member's working key (`skh_…`). */
  key: string;
  /** A key of the same member, revoked before the run. */
  revokedKey: string;
  /** Well-formed, but no key of anyone's. */
  wrongKey: string;
  /** The skills served, each with its description and a line of its body, to look for in what the agent sent. */
  skills: readonly { name: string; description: string }[];
  /** Revokes `key` now (for a mid-session revocation). */
  revoke(key: string): Promise<void>;
  /** The server's log so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Skills copied from the corpus: folder in the corpus → served under its own name. */
const SKILLS = [
  'anthropics-skills/internal-comms',
  'anthropics-skills/brand-guidelines',
  'obra-superpowers/systematic-debugging',
];

const ADMIN_KEY = `skh_${'a'.repeat(43)}`;

export async function startAgentSkillhost(overrides: Record<string, unknown> = {}): Promise<AgentSkillhost> {
  buildServer();
  const folder = mkdtempSync(join(tmpdir(), 'skillhost-agents-'));
  const skillsDir = join(folder, 'skills');
  mkdirSync(skillsDir);
  for (const source of SKILLS)
    cpSync(corpusPath(source), join(skillsDir, source.split('/').pop()!), { recursive: true });
  let instances: Instances | undefined;
  try {
    instances = await startInstances(1, {
      overrides: {
        'app.auth.mode': 'api_key',
        'app.skills.enabled': true,
        'app.skills.directories': [skillsDir],
        'app.mcp.enabled': true,
        ...overrides,
      },
      env: { SKILLHOST_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY },
    });
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  const server = instances;
  const stop = async () => {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    return await prepare(server, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function prepare(instances: Instances, stop: () => Promise<void>): Promise<AgentSkillhost> {
  const { baseUrl } = instances.instances[0];
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : ((await response.json()) as Record<string, unknown>);
  };
  const user = (await admin('POST', '/v1/admin/users', { name: 'agent-user' }))!;
  const created = new Map<string, string>();
  const newKey = async () => {
    const made = (await admin('POST', `/v1/admin/users/${user.id as string}/keys`, {}))!;
    created.set(made.key as string, made.id as string);
    return made.key as string;
  };
  const key = await newKey();
  const revokedKey = await newKey();
  const revoke = async (which: string) => void (await admin('DELETE', `/v1/admin/keys/${created.get(which)!}`));
  await revoke(revokedKey);
  const skills = ((await admin('GET', '/v1/skills'))!.skills as { name: string; description: string }[]).map(
    ({ name, description }) => ({ name, description }),
  );
  return {
    baseUrl,
    mcpUrl: `${baseUrl}/mcp`,
    key,
    revokedKey,
    wrongKey: `skh_${'w'.repeat(43)}`,
    skills,
    revoke,
    output: () => instances.instances[0].output(),
    stop,
  };
}

/**
 * `startAgentSkillhost` overrides that give Skillhost models named `names` (by default `scripted`), each served by the
 * scripted chat-completions server at `url` (`…/v1`): what the gateway runs when a client asks for one of them.
 */
export function scriptedModel(url: string, names: readonly string[] = ['scripted']): Record<string, unknown> {
  const model = {
    provider: 'openai-compatible',
    base_url: url,
    model: 'scripted-1',
    timeout_ms: 20_000,
    max_retries: 0,
  };
  return { 'app.models': Object.fromEntries(names.map((name) => [name, model])) };
}
