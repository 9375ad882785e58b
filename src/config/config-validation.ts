import { z } from 'zod';
import { schemaOf, settingOnPath, settingsOf, type SettingTree, shownValue } from '@skillhost/core';
import { CONFIG_SETTINGS, MIRROR_SETTINGS, MODEL_SETTINGS } from './config-schema.js';

/**
 * The configuration's validation, derived from the settings tree: its zod schema (every section
 * strict, so an unknown key is a problem, not a silent typo). Zod finds the problems; they are told
 * as one line per problem that names the key (or the environment variable it came from), the bad
 * value and what is allowed.
 */
export const CONFIG_TREE_SCHEMA = schemaOf(CONFIG_SETTINGS, {
  'app.models': z.record(z.string(), z.unknown()).optional(),
  // `[app.skills.settings.NAME]`: free-form tables, one per skill, read by that skill's code.
  'app.skills.settings': z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  // `[app.skills.mirrors.NAME]`: read table by table by the loader (MIRROR_TABLE_SCHEMA), to name each mirror.
  'app.skills.mirrors': z.record(z.string(), z.unknown()).optional(),
});

/** `[app.skills.mirrors.NAME]`: each table strict, `source` required (checked by name, to say "missing"). */
export const MIRROR_TABLE_SCHEMA = z.strictObject(
  Object.fromEntries(settingsOf(MIRROR_SETTINGS).map(({ key, setting }) => [key, setting.rule.optional()])),
);

/**
 * `[app.models.NAME]`: each table strict, its keys optional here (required ones are checked by name, to say "missing").
 */
export const MODEL_TABLE_SCHEMA = z.strictObject(
  Object.fromEntries(settingsOf(MODEL_SETTINGS).map(({ key, setting }) => [key, setting.rule.optional()])),
);

export interface Problem {
  /** Sort key: problems are told in the settings tree's order, unknown keys after. */
  rank: number;
  line: string;
}

export interface IssueContext {
  /** The settings the issues' paths are in. */
  tree: SettingTree;
  /** Written before unknown keys' paths. */
  prefix?: string;
  /** Names the value's origin: `app.port`, or `SKILLHOST_PORT (app.port)` when the environment set it. */
  where: (key: string) => string;
  /** The raw value at a dotted key. */
  valueAt: (key: string) => unknown;
  rankOf: (key: string) => number;
  knownUnder: (key: string) => string[];
}

/**
 * One line per setting in trouble (a list with several bad items is one line about the list), one
 * per unknown key, one per section that is not a table.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], context: IssueContext): Problem[] {
  const problems = new Map<string, Problem>();
  for (const issue of issues) {
    const key = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const unknown of issue.keys) {
        const full = `${context.prefix ?? ''}${key ? `${key}.` : ''}${unknown}`;
        problems.set(`?${full}`, {
          rank: 1e6 + problems.size,
          line: `${full}: unknown key (known keys: ${context.knownUnder(key).join(', ')})`,
        });
      }
      continue;
    }
    const found = settingOnPath(context.tree, issue.path);
    const at = found?.key ?? key;
    if (problems.has(at)) continue;
    const shown = shownValue(found?.setting, context.valueAt(at));
    problems.set(at, {
      rank: context.rankOf(at),
      line: `${context.where(at)}: ${shown} is not allowed; expected ${found?.setting.expected ?? 'a table'}`,
    });
  }
  return [...problems.values()];
}
