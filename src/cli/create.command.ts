import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SkillDirectory } from '../config/app-config.js';
import { loadConfig } from '../config/config-loader.js';
import { validateFrontmatter } from '@skillhost/core';
import { type CliIo, CommandFailure, UsageError } from './cli-io.js';

/**
 * `skillhost create NAME [--dir D] [--description TEXT] [--config FILE]`: a new skill folder that
 * passes the strict validator as it is — SKILL.md with its frontmatter and a body to fill in, and
 * the three folders the specification names — ready to edit. Without `--dir` it goes into the
 * first configured skills directory, where the server loads it; a `--dir` the server does not scan
 * is said. Refuses a name the specification does not allow and a folder that exists, changing nothing.
 */
export function createCommand(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { dir: { type: 'string' }, description: { type: 'string' }, config: { type: 'string' } },
  });
  if (positionals.length !== 1)
    throw new UsageError('Give one NAME: lowercase letters, digits and single hyphens, e.g. release-notes.');
  const [name] = positionals;
  const description = values.description ?? `Describe what ${name} does and when to use it.`;
  const checked = validateFrontmatter({ name, description }, name, 'strict');
  if (checked.errors.length > 0)
    throw new CommandFailure(`Cannot create skill '${name}': ${checked.errors.join('; ')}`);
  const { directories, enabled } = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd }).app.skills;
  const parent = values.dir === undefined ? directories[0]?.path : resolve(io.cwd, values.dir);
  if (parent === undefined)
    throw new UsageError('No skills directory is configured ([app.skills] directories is empty): give --dir.');
  const folder = join(parent, name);
  if (existsSync(folder))
    throw new CommandFailure(`Cannot create skill '${name}': ${folder} already exists; choose another name or --dir.`);
  try {
    for (const sub of ['scripts', 'references', 'assets']) mkdirSync(join(folder, sub), { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), skillMd(name, description));
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw new CommandFailure(`Cannot create skill '${name}' in ${folder}: ${(error as Error).message}`);
  }
  io.out(
    `Created ${folder}: edit SKILL.md (its description is what the catalogue shows), then check it with ` +
      `skillhost validate ${relative(io.cwd, folder) || '.'}`,
  );
  io.out(whereTheServerLooks(parent, directories, enabled));
  return 0;
}

/** Whether the configured server loads skills from `parent`, and how it picks a new one up. */
function whereTheServerLooks(parent: string, directories: readonly SkillDirectory[], enabled: boolean): string {
  const configured = directories.map((directory) => directory.configured).join(', ') || 'none';
  if (!directories.some((directory) => resolve(directory.path) === resolve(parent))) {
    return (
      `Note: the server does not load skills from ${parent}: its skills directories are ` +
      `${configured} ([app.skills] directories).`
    );
  }
  const off = enabled ? '' : ' Skills are off in this configuration ([app.skills] enabled = false).';
  return (
    `The server loads it from there after a reload (POST /v1/admin/skills/reload, a restart, or at once with ` +
    `[app.skills] watch = true).${off}`
  );
}

function skillMd(name: string, description: string): string {
  return [
    '---',
    `name: ${name}`,
    `description: ${JSON.stringify(description)}`,
    '---',
    '',
    `# ${name}`,
    '',
    'Step-by-step instructions the model follows once it activates this skill.',
    '',
    '1. …',
    '',
    'Files: put longer documents in references/, templates and data in assets/, and scripts in',
    'scripts/ (run only where the server allows it, as `allowed-tools` declares).',
    '',
  ].join('\n');
}
