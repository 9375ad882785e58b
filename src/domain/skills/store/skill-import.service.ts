import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { checkoutGit, skillFoldersAt } from './git-checkout.js';
import type { DestinationPolicy } from './import-destination.js';
import { ImportSlots } from './import-slots.js';
import { readIndexSkills } from './index-import.reader.js';
import { hasMarketplace, marketplaceSkills } from './plugin-marketplace.js';
import { type ImportSource, parseImportSource, type VersionSource } from './skill-import-source.js';
import { type InstallResult, type InstallTarget, SkillStoreService } from './skill-store.service.js';
import { readSkillFolder, type UploadedFile } from './skill-upload.reader.js';

/** How long a clone, or an index and its files, may take before the import gives up. */
const GIT_TIMEOUT_MS = 120_000;
const INDEX_TIMEOUT_MS = 60_000;
/** What IMPORT_BUSY's Retry-After says: about the time a small import takes. */
export const IMPORT_RETRY_AFTER_SECONDS = 10;

/** One skill read from a source, checked and ready to install. */
interface ImportedSkill {
  /** The folder it came from, whose name the skill's must match (undefined: the declared name stands in). */
  folder: string | undefined;
  files: UploadedFile[];
  source: VersionSource;
}

/** What a source held: its skills, and what was passed over (a marketplace's plugins from elsewhere). */
interface ReadSkills {
  skills: ImportedSkill[];
  warnings: string[];
}

export interface ImportResult {
  /** One per skill, in the order installed. */
  skills: InstallResult[];
  /** What the source named but was not imported, and why. */
  warnings: string[];
}

export interface ImportOptions {
  /** Whether `git+file://` may be read: it reads this server's own disk (admins and the CLI only). */
  localFiles: boolean;
  /** Whether a skill an admin rolled back to an earlier version stays there (a mirror's imports: see `held`). */
  keepRolledBack?: boolean;
  /**
   * A member's import: the server may connect only to public addresses and `[app.skills.import] member_hosts`
   * (see import-destination.ts). Admins and the CLI are trusted with the network the server sits in.
   */
  member?: boolean;
  /** Whether a git source's submodules are checked out too (each URL checked as the source's). */
  submodules?: boolean;
  /** Wait for a free slot (a mirror's run) rather than be refused with IMPORT_BUSY (a route's caller). */
  waitForSlot?: boolean;
}

/**
 * Imports skills into the store from where they are published: a git repository (one skill folder
 * or every skill under a path) or another server's discovery index. Everything is read and held
 * to the upload rules before the first install; each version records where it came from.
 */
@Injectable()
export class SkillImportService {
  private readonly settings: AppConfig['app']['skills']['import'];
  /** Imports running on this instance: each holds a clone on disk and connections, so they are few. */
  private readonly slots: ImportSlots;

  constructor(
    private readonly store: SkillStoreService,
    @Inject(APP_CONFIG) appConfig: AppConfig,
  ) {
    this.settings = appConfig.app.skills.import;
    this.slots = new ImportSlots(this.settings.maxConcurrent);
  }

  async importFrom(
    text: string,
    target: InstallTarget,
    installedBy: string | null,
    options: ImportOptions,
  ): Promise<ImportResult> {
    const source = parseImportSource(text);
    const release = options.waitForSlot === true ? await this.slots.acquire() : this.slots.tryAcquire();
    if (release === undefined) throw busy(this.settings.maxConcurrent);
    try {
      const read = source.kind === 'git' ? await this.readGit(source, options) : await this.readIndex(source, options);
      return await this.installAll(read, target, installedBy, options.keepRolledBack ?? false);
    } finally {
      release();
    }
  }

  /** How a member's destinations are checked; none for an admin's or the CLI's import. */
  private destinationsFor(options: ImportOptions): DestinationPolicy | undefined {
    return options.member === true ? { allowedHosts: this.settings.memberHosts } : undefined;
  }

  /** The skills of a plugin marketplace folder on this machine (the CLI's `skillhost install FOLDER`). */
  async importMarketplaceFolder(
    folder: string,
    target: InstallTarget,
    installedBy: string | null,
  ): Promise<ImportResult> {
    const root = resolve(folder);
    const { folders, warnings } = marketplaceSkills(root, '');
    const skills = folders.map((path) => ({
      folder: basename(path),
      files: readSkillFolder(join(root, path), this.store.limits),
      source: { url: pathToFileURL(root).href, path },
    }));
    return this.installAll({ skills, warnings }, target, installedBy);
  }

  /** Every skill read, all or nothing: one refused (or a failed write) installs none of them. */
  private async installAll(
    read: ReadSkills,
    target: InstallTarget,
    installedBy: string | null,
    keepRolledBack = false,
  ): Promise<ImportResult> {
    const skills = await this.store.installMany(read.skills, target, installedBy, keepRolledBack);
    return { skills, warnings: read.warnings };
  }

  private async readGit(source: Extract<ImportSource, { kind: 'git' }>, options: ImportOptions): Promise<ReadSkills> {
    if (source.url.startsWith('file:') && !options.localFiles)
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        "Cannot import from a git+file:// source: it reads this server's own disk, which only admins may. Use " +
          'git+https://.',
        { problems: ['source: git+file:// is for admins only'] },
      );
    const scratch = mkdtempSync(join(tmpdir(), 'skillhost-import-'));
    try {
      const checkout = join(scratch, 'checkout');
      const { commit } = await checkoutGit(source.url, source.ref, checkout, {
        timeoutMs: GIT_TIMEOUT_MS,
        maxBytes: this.settings.maxCloneBytes,
        allowFile: source.url.startsWith('file:') && options.localFiles,
        destinations: this.destinationsFor(options),
        submodules: options.submodules ?? false,
      });
      const { folders, warnings } = hasMarketplace(checkout, source.path)
        ? marketplaceSkills(checkout, source.path)
        : { folders: skillFoldersAt(checkout, source.path), warnings: [] };
      const skills = folders.map((path) => ({
        // The repository's own root has no folder name worth matching (it is the clone's).
        folder: path === '' ? undefined : basename(path),
        files: readSkillFolder(join(checkout, path), this.store.limits),
        source: {
          url: source.url,
          ...(source.ref === undefined ? {} : { ref: source.ref }),
          ...(path === '' ? {} : { path }),
          commit,
        },
      }));
      return { skills, warnings };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  private async readIndex(
    source: Extract<ImportSource, { kind: 'index' }>,
    options: ImportOptions,
  ): Promise<ReadSkills> {
    if (options.submodules === true)
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Cannot import ${source.url} with submodules: a discovery index has none. Leave 'submodules' out.`,
        { problems: ['submodules: only for git+https://, git+http:// and git+file:// sources'] },
      );
    const read = await readIndexSkills(source.url, source.skill, this.store.limits, {
      timeoutMs: INDEX_TIMEOUT_MS,
      destinations: this.destinationsFor(options),
    });
    const skills = read.map((skill) => ({
      folder: skill.name,
      files: skill.files,
      source: { url: source.url, ...(skill.digest === undefined ? {} : { digest: skill.digest }) },
    }));
    return { skills, warnings: [] };
  }
}

/** IMPORT_BUSY: the caller tries again after Retry-After (`details.retryAfterSeconds`). */
function busy(maxConcurrent: number): AppError {
  return new AppError(
    ErrorCode.IMPORT_BUSY,
    `This server is already running ${maxConcurrent} import(s) ([app.skills.import] max_concurrent); nothing was ` +
      `read. Try again in ${IMPORT_RETRY_AFTER_SECONDS} s.`,
    { maxConcurrent, retryAfterSeconds: IMPORT_RETRY_AFTER_SECONDS },
  );
}
