import type { SkillRecord } from '@skillhost/core';
import type { InstallKey } from './skill-version-store.js';

/** A validated skill about to become its key's current version. */
export interface InstallCandidate {
  key: InstallKey;
  /** The new version as the registry would read it (its path is a scratch folder: read its name and description). */
  record: SkillRecord;
  /** Its `evals/triggers.json` as uploaded; undefined without one. */
  evalsFile: Buffer | undefined;
  /** The content digest it will be stored under. */
  digest: string;
}

/**
 * What an install asks before anything is stored (the trigger evals: their file checked, and the publishing gate): it
 * throws to refuse the lot, or answers warnings by skill name.
 */
export interface InstallGate {
  check(candidates: readonly InstallCandidate[]): Promise<ReadonlyMap<string, readonly string[]>>;
  /** The candidates that became current versions (their keys and digests): what the gate learnt of them is kept. */
  installed?(versions: readonly { key: InstallKey; digest: string }[]): Promise<void>;
}
