import type { CatalogueSnapshot } from './catalogue-snapshot.js';
import type { ResourceListing } from './skill-resources.service.js';
import type { SkillRecord } from './skill.types.js';

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

/** The operator's view: everything a scan saw, host paths included. */
export function presentAdminReport(snapshot: CatalogueSnapshot) {
  return {
    scannedAt: snapshot.scannedAt,
    durationMs: snapshot.durationMs,
    mode: snapshot.mode,
    directories: snapshot.directories,
    valid: [...snapshot.skills.values()].map((skill) => ({
      name: skill.name,
      path: skill.path,
      source: skill.source,
      warnings: skill.warnings,
    })),
    invalid: snapshot.invalid,
    collisions: snapshot.collisions,
    excluded: snapshot.excluded,
    warnings: snapshot.warnings,
  };
}
