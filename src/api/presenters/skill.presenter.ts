import { stringifyInSlices } from '../../domain/shared/sliced-json.js';
import { skillSourceLabel } from '../../domain/skills/skill-source-label.js';
import {
  type CatalogueSnapshot,
  type DirectoryReport,
  isCodeSkill,
  type ResourceListing,
  type SkillRecord,
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
    source: skillSourceLabel(skill.source, directories),
    warnings: skill.warnings,
    resources,
  };
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

const listJson = new WeakMap<CatalogueSnapshot, Buffer | Promise<Buffer>>();

/**
 * The list as UTF-8 JSON, with the prefixes that invoke a skill at the start of a message (the
 * configuration's, the same for every snapshot), serialised and encoded once per snapshot (it only changes when the
 * skills are reloaded), in slices: the first request after a reload of thousands of skills waits for it
 * without stalling the others. Bytes rather than text, so no answer encodes the same text again; the bytes
 * themselves once they are made, so the requests after the first wait for no promise.
 */
export function skillListJson(
  snapshot: CatalogueSnapshot,
  explicitPrefixes: readonly string[],
): Buffer | Promise<Buffer> {
  let json = listJson.get(snapshot);
  if (json === undefined) {
    const { skills: _all, ...head } = presentSkillList(snapshot, explicitPrefixes, false);
    const made = stringifyInSlices(
      { ...head, skills: [...snapshot.skills.values()] },
      'skills',
      undefined,
      presentSkillSummary,
    ).then((text) => {
      const bytes = Buffer.from(text);
      listJson.set(snapshot, bytes);
      return bytes;
    });
    listJson.set(snapshot, made);
    json = made;
  }
  return json;
}

const adminJson = new WeakMap<CatalogueSnapshot, Promise<string>>();

/**
 * The admin report as JSON text (`extra` members added, such as a reload's diff), serialised in slices; without
 * `extra`, once per snapshot.
 */
export function adminReportJson(snapshot: CatalogueSnapshot, extra?: Record<string, unknown>): Promise<string> {
  const report = () => ({ ...presentAdminReport(snapshot, false), valid: adminValid(snapshot) });
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

/**
 * The team's valid skills with the ones shared with groups, in name order: the admin view shows every shared skill,
 * whoever's catalogue offers it (`GET /v1/admin/skills/:name/access` tells whose).
 */
function adminValid(snapshot: CatalogueSnapshot): SkillRecord[] {
  const shared = snapshot.groupOnly.skills;
  if (shared.length === 0) return [...snapshot.skills.values()];
  return [...snapshot.skills.values(), ...shared].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The operator's view: everything a scan saw, host paths included. */
export function presentAdminReport(snapshot: CatalogueSnapshot, withValid = true) {
  return {
    scannedAt: snapshot.scannedAt,
    durationMs: snapshot.durationMs,
    mode: snapshot.mode,
    directories: snapshot.directories,
    valid: withValid ? adminValid(snapshot).map(presentScannedSkill) : [],
    invalid: snapshot.invalid,
    collisions: snapshot.collisions,
    excluded: snapshot.excluded,
    unavailable: [
      ...snapshot.unavailable,
      ...snapshot.groupOnly.unavailable.map(({ entry }) => entry),
      ...[...snapshot.personal.values()].flatMap((own) => own.unavailable),
    ],
    disabled: [
      ...snapshot.disabled.values(),
      ...snapshot.groupOnly.disabled,
      ...[...snapshot.personal.values()].flatMap((own) => [...own.disabled.values()]),
    ].map((skill) => ({ name: skill.name, path: skill.path, source: skill.source })),
    personal: [...snapshot.personal.values()].flatMap((own) => [...own.skills.values()]).map(presentScannedSkill),
    warnings: snapshot.warnings,
    commands: presentCommandReport(snapshot),
  };
}
