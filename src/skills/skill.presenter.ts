import type { CatalogueSnapshot } from './catalogue-snapshot.js';
import { presentCommandReport } from './command.presenter.js';
import type { ResourceListing } from './skill-resources.service.js';
import { isCodeSkill, type SkillRecord } from './skill.types.js';

/** Response shapes for the skills routes (REST today, GraphQL later): one place, no host paths for users. */
export function presentSkillSummary(skill: SkillRecord) {
  return { name: skill.name, description: skill.description, frontmatter: skill.frontmatter };
}

export function presentSkillDetail(skill: SkillRecord, resources: ResourceListing) {
  return { ...presentSkillSummary(skill), source: skill.source, warnings: skill.warnings, resources };
}

export function presentSkillList(snapshot: CatalogueSnapshot) {
  return { count: snapshot.skills.size, scannedAt: snapshot.scannedAt, skills: [...snapshot.skills.values()].map(presentSkillSummary) };
}

const listJson = new WeakMap<CatalogueSnapshot, string>();

/** The list as JSON text, serialised once per snapshot: it only changes when the skills are reloaded. */
export function skillListJson(snapshot: CatalogueSnapshot): string {
  let json = listJson.get(snapshot);
  if (json === undefined) {
    json = JSON.stringify(presentSkillList(snapshot));
    listJson.set(snapshot, json);
  }
  return json;
}

function presentScannedSkill(skill: SkillRecord) {
  return {
    name: skill.name,
    path: skill.path,
    source: skill.source,
    warnings: skill.warnings,
    kind: isCodeSkill(skill) ? ('code' as const) : ('instructions' as const),
    origin: skill.origin ?? 'folder',
    scope: skill.scope ?? 'user',
    digest: skill.digest ?? null,
    store: skill.store === undefined ? null : { scope: skill.store.scope, owner: skill.store.owner, version: skill.store.version },
  };
}

/** The operator's view: everything a scan saw, host paths included. */
export function presentAdminReport(snapshot: CatalogueSnapshot) {
  return {
    scannedAt: snapshot.scannedAt,
    durationMs: snapshot.durationMs,
    mode: snapshot.mode,
    directories: snapshot.directories,
    valid: [...snapshot.skills.values()].map(presentScannedSkill),
    invalid: snapshot.invalid,
    collisions: snapshot.collisions,
    excluded: snapshot.excluded,
    unavailable: snapshot.unavailable,
    disabled: [...snapshot.disabled.values(), ...[...snapshot.personal.values()].flatMap((own) => [...own.disabled.values()])].map((skill) => ({ name: skill.name, path: skill.path, source: skill.source })),
    personal: [...snapshot.personal.values()].flatMap((own) => [...own.skills.values()]).map(presentScannedSkill),
    warnings: snapshot.warnings,
    commands: presentCommandReport(snapshot),
  };
}
