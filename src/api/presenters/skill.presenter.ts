import { join } from 'node:path';
import { stringifyInSlices } from '../../domain/shared/sliced-json.js';
import { packageRoot } from '../../config/package-version.js';
import {
  type CatalogueSnapshot,
  type DirectoryReport,
  isCodeSkill,
  programmaticSource,
  type ResourceListing,
  SKILL_SCOPES,
  type SkillRecord,
  storeSource,
} from '@skillhost/core';
import { presentCommandReport } from './command.presenter.js';

/** Response shapes for the skills routes (REST today, GraphQL later): one place, no host paths for users. */
export function presentSkillSummary(skill: SkillRecord) {
  return { name: skill.name, description: skill.description, frontmatter: skill.frontmatter };
}

/** `directories`: the scan's (a snapshot's or a view's), which number the folders `source` names. */
export function presentSkillDetail(
  skill: SkillRecord,
  resources: ResourceListing,
  directories: readonly DirectoryReport[],
) {
  return {
    ...presentSkillSummary(skill),
    source: presentSource(skill.source, directories),
    warnings: skill.warnings,
    resources,
  };
}

/**
 * Where a skill comes from, in words anyone may read: `bundled` (Skillhost's own skills folder),
 * `shared folder N` (the Nth of `[app.skills] directories`), `code folder N` (of
 * `code_directories`), `store` (a shared store skill), `personal` (a user's own store skill), or
 * `programmatic:<scope>`. Never the folder itself: host paths are for the admin report.
 */
export function presentSource(source: string, directories: readonly DirectoryReport[]): string {
  if (source === storeSource('shared', null)) return 'store';
  if (source.startsWith(storeSource('personal', ''))) return 'personal';
  if (SKILL_SCOPES.some((scope) => source === programmaticSource(scope))) return source;
  const directory = directories.find((candidate) => candidate.configured === source);
  if (directory === undefined) return 'unknown';
  if (directory.path === bundledSkillsFolder()) return 'bundled';
  const siblings = directories.filter((candidate) => (candidate.code ?? false) === (directory.code ?? false));
  return `${directory.code ? 'code' : 'shared'} folder ${siblings.indexOf(directory) + 1}`;
}

let bundled: string | null | undefined;

/** The `skills/` folder Skillhost's package ships (null when the package is not found). */
function bundledSkillsFolder(): string | null {
  if (bundled === undefined) {
    const root = packageRoot();
    bundled = root === undefined ? null : join(root, 'skills');
  }
  return bundled;
}

/** The list, with the prefixes that invoke a skill at the start of a message (the configuration's). */
export function presentSkillList(snapshot: CatalogueSnapshot, explicitPrefixes: readonly string[], withSkills = true) {
  return {
    count: snapshot.skills.size,
    scannedAt: snapshot.scannedAt,
    explicitPrefixes: [...explicitPrefixes],
    skills: withSkills ? [...snapshot.skills.values()].map(presentSkillSummary) : [],
  };
}

const listJson = new WeakMap<CatalogueSnapshot, Promise<string>>();

/**
 * The list as JSON text, with the prefixes that invoke a skill at the start of a message (the
 * configuration's, the same for every snapshot), serialised once per snapshot (it only changes when the skills are
 * reloaded), in slices: the first request after a reload of thousands of skills waits for it
 * without stalling the others.
 */
export function skillListJson(snapshot: CatalogueSnapshot, explicitPrefixes: readonly string[]): Promise<string> {
  let json = listJson.get(snapshot);
  if (json === undefined) {
    const { skills: _all, ...head } = presentSkillList(snapshot, explicitPrefixes, false);
    json = stringifyInSlices(
      { ...head, skills: [...snapshot.skills.values()] },
      'skills',
      undefined,
      presentSkillSummary,
    );
    listJson.set(snapshot, json);
  }
  return json;
}

const adminJson = new WeakMap<CatalogueSnapshot, Promise<string>>();

/**
 * The admin report as JSON text (`extra` members added, such as a reload's diff), serialised in slices; without
 * `extra`, once per snapshot.
 */
export function adminReportJson(snapshot: CatalogueSnapshot, extra?: Record<string, unknown>): Promise<string> {
  const report = () => ({ ...presentAdminReport(snapshot, false), valid: [...snapshot.skills.values()] });
  if (extra !== undefined) return stringifyInSlices({ ...report(), ...extra }, 'valid', undefined, presentScannedSkill);
  let json = adminJson.get(snapshot);
  if (json === undefined) {
    json = stringifyInSlices(report(), 'valid', undefined, presentScannedSkill);
    adminJson.set(snapshot, json);
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
    store:
      skill.store === undefined
        ? null
        : { scope: skill.store.scope, owner: skill.store.owner, version: skill.store.version },
  };
}

/** The operator's view: everything a scan saw, host paths included. */
export function presentAdminReport(snapshot: CatalogueSnapshot, withValid = true) {
  return {
    scannedAt: snapshot.scannedAt,
    durationMs: snapshot.durationMs,
    mode: snapshot.mode,
    directories: snapshot.directories,
    valid: withValid ? [...snapshot.skills.values()].map(presentScannedSkill) : [],
    invalid: snapshot.invalid,
    collisions: snapshot.collisions,
    excluded: snapshot.excluded,
    unavailable: [...snapshot.unavailable, ...[...snapshot.personal.values()].flatMap((own) => own.unavailable)],
    disabled: [
      ...snapshot.disabled.values(),
      ...[...snapshot.personal.values()].flatMap((own) => [...own.disabled.values()]),
    ].map((skill) => ({ name: skill.name, path: skill.path, source: skill.source })),
    personal: [...snapshot.personal.values()].flatMap((own) => [...own.skills.values()]).map(presentScannedSkill),
    warnings: snapshot.warnings,
    commands: presentCommandReport(snapshot),
  };
}
