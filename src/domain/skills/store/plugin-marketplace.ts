import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { AppError, ErrorCode } from '@skillhost/core';
import { z } from 'zod';
import { skillFoldersAt } from './git-checkout.js';

/**
 * A Claude Code plugin marketplace (`.claude-plugin/marketplace.json`,
 * https://code.claude.com/docs/en/plugin-marketplaces): the skills of its plugins that live in the
 * same folder or repository. A plugin's skills are the skill folders under its `skills/` folder and
 * under each path its entry's `skills` names. A plugin fetched from elsewhere (GitHub, a URL, npm)
 * is not followed: it is named in the warnings, to be imported from its own source.
 */

export const MARKETPLACE_FILE = '.claude-plugin/marketplace.json';
const MAX_MARKETPLACE_BYTES = 1024 * 1024;

const marketplaceSchema = z.object({
  metadata: z
    .object({ pluginRoot: z.string().max(1024).optional() })
    .passthrough()
    .optional(),
  plugins: z
    .array(
      z
        .object({
          name: z.string().min(1).max(200),
          source: z.union([z.string().max(1024), z.object({}).passthrough()]),
          skills: z.union([z.string().max(1024), z.array(z.string().max(1024)).max(100)]).optional(),
        })
        .passthrough(),
    )
    .max(1000),
});

export interface MarketplaceSkills {
  /** Skill folders, relative to the marketplace's folder. */
  folders: string[];
  warnings: string[];
}

/** Whether `folder` (a path inside `root`, '' for the root) holds a marketplace. */
export function hasMarketplace(root: string, folder: string): boolean {
  const file = join(root, folder, MARKETPLACE_FILE);
  return existsSync(file) && lstatSync(file).isFile();
}

/**
 * The skill folders the marketplace at `folder` (relative to `root`, the checkout) lists, relative to `root`.
 * VALIDATION_FAILED for a marketplace that is not one, a plugin path that leaves the folder, or no skill at all.
 */
export function marketplaceSkills(root: string, folder: string): MarketplaceSkills {
  const bytes = readFileSync(join(root, folder, MARKETPLACE_FILE));
  if (bytes.length > MAX_MARKETPLACE_BYTES) throw invalid(`it is larger than ${MAX_MARKETPLACE_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid('it is not JSON');
  }
  const parsed = marketplaceSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`${issue.path.join('.')}: ${issue.message}`);
  }
  const pluginRoot = parsed.data.metadata?.pluginRoot;
  const folders: string[] = [];
  const warnings: string[] = [];
  for (const plugin of parsed.data.plugins) {
    if (typeof plugin.source !== 'string') {
      warnings.push(
        `Plugin '${plugin.name}' comes from elsewhere ` +
          `(${describeSource(plugin.source)}): import it from its own source.`,
      );
      continue;
    }
    const base = pluginPathOf(plugin.source, pluginRoot);
    const paths = ['skills', ...[plugin.skills ?? []].flat()].map((path) =>
      joined(folder, insideMarketplace(posix.join(base, path), plugin.name)),
    );
    const found = [...new Set(paths)]
      .filter((path) => isFolder(root, path))
      .flatMap((path) => skillsOrNone(root, path));
    if (found.length === 0) warnings.push(`Plugin '${plugin.name}' has no skills.`);
    folders.push(...found.filter((path) => !folders.includes(path)));
  }
  if (folders.length === 0) throw invalid('none of its plugins here has a skill');
  return { folders, warnings };
}

/**
 * A relative source as Claude Code reads it: `./path` from the marketplace's folder, a bare name under `pluginRoot`.
 */
function pluginPathOf(source: string, pluginRoot: string | undefined): string {
  if (source.startsWith('./') || source === '.' || pluginRoot === undefined) return source;
  return posix.join(pluginRoot, source);
}

/**
 * A path relative to the marketplace's folder, normalised; VALIDATION_FAILED for one that leaves that folder (a
 * backslash is refused too: it is a separator on Windows only).
 */
function insideMarketplace(path: string, plugin: string): string {
  const normalized = posix.normalize(path);
  if (path.includes('\\') || posix.isAbsolute(normalized) || normalized === '..' || normalized.startsWith('../'))
    throw invalid(`plugin '${plugin}' points outside the marketplace's folder ('${path}')`);
  return normalized === '.' ? '' : normalized.replace(/\/$/, '');
}

function joined(folder: string, path: string): string {
  return [folder, path].filter((part) => part !== '').join('/');
}

function isFolder(root: string, path: string): boolean {
  const full = join(root, path);
  return existsSync(full) && lstatSync(full).isDirectory();
}

/** The skill folders under a path (symbolic links on the way refused), or none. */
function skillsOrNone(root: string, path: string): string[] {
  try {
    return skillFoldersAt(root, path);
  } catch (error) {
    if (
      AppError.isInstance(error) &&
      error.code === ErrorCode.VALIDATION_FAILED &&
      /no folder there/.test(error.message)
    )
      return [];
    throw error;
  }
}

function describeSource(source: Record<string, unknown>): string {
  const kind = typeof source.source === 'string' ? source.source : 'unknown';
  const where = [source.repo, source.url, source.package].find((value) => typeof value === 'string');
  return where === undefined ? kind : `${kind} ${String(where).slice(0, 200)}`;
}

function invalid(problem: string): AppError {
  return new AppError(
    ErrorCode.VALIDATION_FAILED,
    `The plugin marketplace (${MARKETPLACE_FILE}) cannot be read: ${problem}.`,
    {
      problems: [`marketplace: ${problem}`],
    },
  );
}
