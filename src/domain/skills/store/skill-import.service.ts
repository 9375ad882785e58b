import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { checkoutGit, skillFoldersAt } from './git-checkout.js';
import { readIndexSkills } from './index-import.reader.js';
import { hasMarketplace, marketplaceSkills } from './plugin-marketplace.js';
import { type ImportSource, parseImportSource, type VersionSource } from './skill-import-source.js';
import { type InstallResult, type InstallTarget, SkillStoreService } from './skill-store.service.js';
import { readSkillFolder, type UploadedFile } from './skill-upload.reader.js';

/** How long a clone, or an index and its files, may take before the import gives up. */
const GIT_TIMEOUT_MS = 120_000;
const INDEX_TIMEOUT_MS = 60_000;

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
}

/**
 * Imports skills into the store from where they are published: a git repository (one skill folder
 * or every skill under a path) or another server's discovery index. Everything is read and held
 * to the upload rules before the first install; each version records where it came from.
 */
@Injectable()
export class SkillImportService {
  constructor(private readonly store: SkillStoreService) {}

  async importFrom(
    text: string,
    target: InstallTarget,
    installedBy: string | null,
    options: ImportOptions,
  ): Promise<ImportResult> {
    const source = parseImportSource(text);
    const read = source.kind === 'git' ? await this.readGit(source, options) : await this.readIndex(source);
    return this.installAll(read, target, installedBy, options.keepRolledBack ?? false);
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
      const { commit } = await checkoutGit(source.url, source.ref, checkout, GIT_TIMEOUT_MS);
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

  private async readIndex(source: Extract<ImportSource, { kind: 'index' }>): Promise<ReadSkills> {
    const read = await readIndexSkills(source.url, source.skill, this.store.limits, INDEX_TIMEOUT_MS);
    const skills = read.map((skill) => ({
      folder: skill.name,
      files: skill.files,
      source: { url: source.url, ...(skill.digest === undefined ? {} : { digest: skill.digest }) },
    }));
    return { skills, warnings: [] };
  }
}
