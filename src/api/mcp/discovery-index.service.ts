import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppError, type CatalogueSnapshot, contentDigest, ErrorCode, type SkillRecord } from '@skillhost/core';
import type { VersionSource } from '../../domain/skills/store/skill-import-source.js';
import { skillDigest } from '../../domain/skills/store/index-skill-digest.js';
import { SkillStoreService } from '../../domain/skills/store/skill-store.service.js';
import {
  INDEX_VERSION,
  type IndexFile,
  type IndexSkill,
  indexEntry,
  indexFiles,
  unfitPath,
  versionedFileUrl,
} from './agent-skills-index.js';
import { type PublishedFile, type PublishedSkill, PublishedSkillsService } from './published-skills.service.js';
import { mimeTypeOf } from './skill-uri.js';
import { ViewCache } from './view-cache.js';

/** A discovery document as sent: its bytes and their digest, the `ETag` a client sends back. */
export interface DiscoveryBody {
  text: string;
  etag: string;
}

/** `/.well-known/agent-skills/versions.json`: every version of every skill the caller may see. */
export interface VersionsDocument {
  version: string;
  skills: SkillVersions[];
}

export interface SkillVersions {
  name: string;
  /** The skill-level digest of the version the discovery index lists now. */
  current: string;
  /** Newest first. */
  versions: ListedVersion[];
}

export interface ListedVersion {
  /** The proposal's skill-level digest of this version: what `skillhost sync --pin NAME@DIGEST` takes. */
  digest: string;
  /** The store's name for it: its content digest and number (both null for a skill from a folder). */
  version: { digest: string | null; number: number | null };
  current: boolean;
  installedAt: string | null;
  source: VersionSource | null;
  /** Where each file of this very version is (a stored version's URLs never change). */
  files: IndexFile[];
}

/** A stored version as versions.json lists it; null when the proposal cannot describe its paths. */
type StoredListing = { skillDigest: string; files: IndexFile[]; blobs: Map<string, string> } | null;

/** Stored versions remembered by digest: content-addressed, so an entry is never stale. */
const STORED_MEMO = 20_000;

/**
 * The discovery index and, beside it, the list of every version: the proposal has none yet, so
 * Skillhost publishes one in its shape, for clients to pin a version and fetch it again later (each
 * store version with its skill-level digest, number, install time, source and files at URLs that
 * keep serving that version). Each body is made once per catalogue view and kept while the view
 * lasts (a view never changes: an install, a rollback, a rescan or a filter makes another), unless
 * a skill was left out for a reason that may pass.
 */
@Injectable()
export class DiscoveryIndexService {
  private readonly bodies = new ViewCache<{ body: DiscoveryBody; lasting: boolean }>(2);
  private readonly stored = new Map<string, Promise<StoredListing | undefined>>();

  constructor(
    private readonly store: SkillStoreService,
    private readonly published: PublishedSkillsService,
  ) {}

  /** `index.json` for a view: the proposal's entries of the skills it publishes. */
  async index(view: CatalogueSnapshot): Promise<DiscoveryBody> {
    return (await this.bodies.get(view, 'index', () => this.make(view, (skills) => this.indexOf(skills)), kept)).body;
  }

  /** `versions.json` for a view. */
  async versions(view: CatalogueSnapshot): Promise<DiscoveryBody> {
    return (await this.bodies.get(view, 'versions', () => this.make(view, (skills) => this.versionsOf(skills)), kept))
      .body;
  }

  private async make(
    view: CatalogueSnapshot,
    document: (skills: readonly PublishedSkill[]) => Promise<object> | object,
  ): Promise<{ body: DiscoveryBody; lasting: boolean }> {
    const page = await this.published.page(view, undefined, Number.MAX_SAFE_INTEGER);
    const text = JSON.stringify(await document(page.skills));
    return {
      body: { text, etag: `"sha256:${createHash('sha256').update(text).digest('hex')}"` },
      lasting: page.lasting,
    };
  }

  private indexOf(published: readonly PublishedSkill[]): { version: string; skills: IndexSkill[] } {
    const skills: IndexSkill[] = [];
    for (const skill of published) {
      const entry = indexEntry(skill);
      if (!('problem' in entry)) skills.push(entry);
    }
    return { version: INDEX_VERSION, skills };
  }

  private async versionsOf(published: readonly PublishedSkill[]): Promise<VersionsDocument> {
    const skills: SkillVersions[] = [];
    for (const skill of published) {
      const entry = indexEntry(skill);
      if ('problem' in entry) continue;
      const now: ListedVersion = {
        digest: entry.digest,
        version: entry.version,
        current: true,
        installedAt: null,
        source: null,
        files: entry.files,
      };
      const versions = skill.record.store === undefined ? [now] : await this.storeVersions(skill.record, now);
      skills.push({ name: entry.name, current: entry.digest, versions });
    }
    return { version: INDEX_VERSION, skills };
  }

  /** A store skill's versions, newest first; one whose paths the proposal cannot describe is left out. */
  private async storeVersions(record: SkillRecord, now: ListedVersion): Promise<ListedVersion[]> {
    const origin = record.store!;
    const history = await this.store.history({ scope: origin.scope, ownerId: origin.ownerId, name: record.name });
    if (history === null) return [now];
    const listed: ListedVersion[] = [];
    for (const version of [...history.versions].reverse()) {
      const stored = await this.listing(version.digest, record.name);
      if (stored === undefined || stored === null) continue;
      listed.push({
        digest: stored.skillDigest,
        version: { digest: version.digest, number: version.version },
        current: version.version === history.current,
        installedAt: version.installedAt.toISOString(),
        source: version.source,
        files: stored.files,
      });
    }
    return listed;
  }

  /** A stored version's files and skill-level digest; undefined when the store has no version by that digest. */
  private listing(digest: string, name: string): Promise<StoredListing | undefined> {
    let listing = this.stored.get(digest);
    if (listing === undefined) {
      listing = this.store.storedVersion(digest).then((version) => {
        if (version === null) return undefined;
        if (unfitPath(version.manifest.map((file) => file.path)) !== undefined) return null;
        return {
          skillDigest: skillDigest(version.manifest),
          files: indexFiles(version.manifest, (path) => versionedFileUrl(name, digest, path)),
          blobs: new Map(version.manifest.map((file) => [file.path, file.digest])),
        };
      });
      if (this.stored.size >= STORED_MEMO) this.stored.clear();
      this.stored.set(digest, listing);
      listing.then(
        (found) => found === undefined && this.stored.delete(digest),
        () => this.stored.delete(digest),
      );
    }
    return listing;
  }

  /**
   * One file of one version of a skill the caller may see (`record`, from their view): a version of that very install
   * (a personal skill's versions are its owner's), read from the store.
   */
  async file(record: SkillRecord, versionDigest: string, path: string): Promise<PublishedFile> {
    const notFound = (message: string) =>
      new AppError(ErrorCode.RESOURCE_NOT_FOUND, message, { name: record.name, path, version: versionDigest });
    if (record.store?.history.has(versionDigest) !== true)
      throw notFound(
        `Skill '${record.name}' has no stored version ${versionDigest}; ` +
          '/.well-known/agent-skills/versions.json lists its versions.',
      );
    const listing = await this.listing(versionDigest, record.name);
    if (listing === undefined || listing === null)
      throw notFound(`Version ${versionDigest} of skill '${record.name}' is not served in the discovery index.`);
    const blob = listing.blobs.get(path);
    if (blob === undefined)
      throw notFound(
        `Resource '${path}' is not a file of version ${versionDigest} of skill '${record.name}'. Its files: ` +
          `${[...listing.blobs.keys()].slice(0, 20).join(', ')}`,
      );
    const bytes = await this.store.storedFile(blob);
    if (bytes === undefined) throw notFound(`The store has lost the content of '${path}' (${blob}).`);
    return {
      bytes,
      digest: contentDigest(bytes),
      mimeType: mimeTypeOf(path),
      isText: isUtf8(bytes) && !bytes.includes(0),
    };
  }
}

/** Kept for as long as its view lasts, unless a skill was left out for a reason that may pass. */
function kept(made: { lasting: boolean }): boolean {
  return made.lasting;
}
