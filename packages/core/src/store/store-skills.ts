import type { ValidationMode } from '../options/skills-options.schema.js';
import { inspectSkillFolder } from '../skill/skill-folder.reader.js';
import type { InvalidSkill, SkillRecord } from '../skill/skill.types.js';
import type { StoreContents } from './skill-store-reader.js';

/** What the store adds to a snapshot: shared skills, personal ones (by owner id), and the store's switches. */
export interface StoreSkills {
  shared: readonly SkillRecord[];
  personal: readonly SkillRecord[];
  invalid: readonly InvalidSkill[];
  switches: ReadonlyMap<string, boolean>;
}

/** How a store skill's source reads in listings and collisions. */
export function storeSource(scope: 'shared' | 'personal', owner: string | null): string {
  return scope === 'shared' ? 'store' : `store:personal:${owner ?? '?'}`;
}

/**
 * The store's unpacked skills read as folders with the configured rules. A version installed under
 * other rules may not pass today's (the validation mode changed): it is reported invalid, not loaded.
 */
export function readStoreSkills(contents: StoreContents, mode: ValidationMode): StoreSkills {
  const shared: SkillRecord[] = [];
  const personal: SkillRecord[] = [];
  const invalid: InvalidSkill[] = [];
  for (const { install, folder } of contents.entries) {
    const source = storeSource(install.scope, install.ownerName);
    const inspection = inspectSkillFolder(folder, source, mode, install.name);
    if (inspection === undefined) {
      invalid.push({
        path: folder,
        source,
        name: install.name,
        errors: ['The unpacked version has no SKILL.md.'],
        warnings: [],
      });
    } else if (inspection.kind === 'invalid') {
      invalid.push(inspection.invalid);
    } else {
      const record: SkillRecord = {
        ...inspection.skill,
        digest: install.digest,
        files: install.manifest,
        store: {
          scope: install.scope,
          ownerId: install.ownerId,
          owner: install.ownerName,
          version: install.version,
          history: new Set(install.history),
          ...(install.groups === undefined ? {} : { groups: new Set(install.groups) }),
        },
      };
      (install.scope === 'shared' ? shared : personal).push(record);
    }
  }
  return { shared, personal, invalid, switches: contents.switches };
}
