import { type Dirent, readdirSync, realpathSync, type Stats, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { AppError, ErrorCode } from '../errors/app-error.js';
import type { SkillsConfig } from '../options/skills-config.js';
import { HARD_LIMITS } from '../options/skills-options.schema.js';
import type { SkillStoreReader } from '../store/skill-store-reader.js';
import { SILENT_LOGGER, type SkillsLogger } from './skills-logger.js';
import type { SkillsSettings } from './skills-settings.js';
import { locateFrontmatter, MAX_FRONTMATTER_BYTES } from '../skill/frontmatter-reader.js';
import { isInside, normalizeResourcePath } from '../resources/resource-path.js';
import type { SkillRegistry } from './skill-registry.js';
import { compareByName, SKIPPED_FOLDERS } from '../skill/skill-order.js';
import type { SkillFrontmatter } from '../skill/skill-validator.js';
import type { ProgrammaticContent, SkillRecord } from '../skill/skill.types.js';
import type { CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import { readFileHead } from '../resources/file-head.js';
import { FolderDigests, type FolderLimits } from '../skill/skill-folder-files.js';
import type { ManifestEntry } from '../skill/skill-version.js';
import { capUtf8, truncationNotice } from '../util/truncation.js';

export interface ActivatedSkill {
  name: string;
  frontmatter: Readonly<SkillFrontmatter>;
  body: string;
  truncated: boolean;
  /** In a chat: the version activated (`sha256:…`), which the chat keeps reading until it activates the skill again. */
  version?: string;
  /** In a chat: why this version is not pinned (too large to keep). */
  versionWarning?: string;
}

/** Whose catalogue a read goes through, and for a chat, the versions it activated. */
export interface SkillReadScope {
  /** A user's view (personal skills, filters); default: the whole catalogue. */
  snapshot?: CatalogueSnapshot;
  /**
   * In a chat: the version each activated skill was activated at, by name. Reads of such a skill
   * come from that version; an activation records the current one (and keeps it in the store).
   */
  pins?: ReadonlyMap<string, string>;
}

/** The reads a tool makes, bound to one caller's scope. */
export interface SkillReader {
  get(name: string): SkillRecord;
  activate(name: string): Promise<ActivatedSkill>;
  readResource(name: string, path: string): Promise<SkillResource>;
  listResources(name: string, type?: ResourceType): Promise<ResourceListing>;
}

export interface SkillResource {
  name: string;
  path: string;
  content: string;
  truncated: boolean;
}

export interface ResourceListing {
  files: { path: string; size: number }[];
  /** True when the walk stopped at its bounds and more files exist. */
  truncated: boolean;
}

/** The kinds of file the specification names by folder; anything else is `other`. */
export const RESOURCE_TYPES = ['scripts', 'references', 'assets', 'other'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export function resourceTypeOf(path: string): ResourceType {
  const folder = path.split(/[\\/]/)[0];
  return folder === 'scripts' || folder === 'references' || folder === 'assets' ? folder : 'other';
}

const BINARY_SNIFF_BYTES = 8192;
/** What a skill may hold to be published: the MCP Skills extension's per-skill limits (512 files, 16 MiB). */
export const PUBLISHED_LIMITS: FolderLimits = { maxFiles: 512, maxBytes: 16 * 1024 * 1024 };
const LISTING_MAX_FILES = 500;
const LISTING_MAX_DEPTH = 6;
const SUGGESTION_LIMIT = 20;

/**
 * Levels 2 and 3 of progressive disclosure: a skill's instructions and its other files, read from
 * disk on demand, size-capped, and never from outside the skill folder. Error messages name paths
 * relative to the skill only; host paths stay in the logs.
 *
 * File access is synchronous, as in discovery: skill files are small local files (every read is
 * capped), each call costs microseconds, and it spares a tool call a dozen round trips through
 * libuv's four-thread pool, which under load cost far more than the reads: with 32 turns in
 * flight, an activation took 41 ms (p50) that way and takes 0.2 ms now (bench/results/http.md).
 */
export class SkillResources {
  private readonly config: SkillsConfig;
  private readonly truncationLogged = new Set<string>();
  /**
   * Disk skills' published files, remembered by folder until a file's size, times or inode change (looked at once a
   * second at most).
   */
  private readonly published = new FolderDigests({ maxFolders: 50_000, recheckMs: 1000 });

  constructor(
    private readonly registry: SkillRegistry,
    settings: SkillsSettings,
    private readonly store?: SkillStoreReader,
    private readonly logger: SkillsLogger = SILENT_LOGGER,
  ) {
    this.config = settings.skills;
  }

  /** The reads of one caller (a user's view; in a chat, its pinned versions). */
  reader(scope: SkillReadScope): SkillReader {
    return {
      get: (name) => this.registry.get(name, scope.snapshot),
      activate: (name) => this.activate(name, scope),
      readResource: (name, path) => this.readResource(name, path, scope),
      listResources: (name, type) => this.listResources(name, type, scope),
    };
  }

  async activate(name: string, scope: SkillReadScope = {}): Promise<ActivatedSkill> {
    const skill = this.registry.get(name, scope.snapshot);
    const kept = scope.pins === undefined ? undefined : await this.store?.keep(skill);
    const version =
      kept === undefined ? {} : 'digest' in kept ? { version: kept.digest } : { versionWarning: kept.warning };
    return { ...(await this.readInstructions(await this.located(skill, {}))), ...version };
  }

  private async readInstructions(skill: SkillRecord): Promise<ActivatedSkill> {
    const limit = Math.min(this.config.maxSkillMdBytes, HARD_LIMITS.skillMdBytes);
    if (skill.programmatic !== undefined) return activateFromMemory(skill, skill.programmatic, limit);
    const { bytes, size } = this.readSkillMd(skill, MAX_FRONTMATTER_BYTES + limit);
    const location = locateFrontmatter(bytes, bytes.length, bytes.length === size);
    if (location.kind !== 'found') {
      throw new AppError(
        ErrorCode.SKILL_NOT_FOUND,
        `Skill '${skill.name}' changed on disk and its SKILL.md no longer has valid frontmatter; reload the skills.`,
        { name: skill.name },
      );
    }
    const bodyBytes = size - location.bodyStart;
    const shown = Math.min(bodyBytes, limit);
    const truncated = bodyBytes > limit;
    let body = decodeUtf8(bytes.subarray(location.bodyStart, location.bodyStart + shown), truncated, false).trim();
    if (truncated) {
      body += `\n\n${truncationNotice(shown, bodyBytes, 'SKILL.md')}`;
      if (!this.truncationLogged.has(skill.skillFile)) {
        this.truncationLogged.add(skill.skillFile);
        this.logger.warn(
          `SKILL.md of '${skill.name}' (${skill.skillFile}) has a ${bodyBytes}-byte body; activations show the ` +
            `first ${shown} bytes (app.skills.max_skill_md_bytes)`,
        );
      }
    }
    return { name: skill.name, frontmatter: skill.frontmatter, body, truncated };
  }

  async readResource(name: string, requestedPath: string, scope: SkillReadScope = {}): Promise<SkillResource> {
    const skill = await this.located(this.registry.get(name, scope.snapshot), scope);
    const path = normalizeResourcePath(requestedPath);
    const limit = Math.min(this.config.maxResourceBytes, HARD_LIMITS.resourceBytes);
    if (skill.programmatic !== undefined) return this.readFromMemory(skill, skill.programmatic, path, limit);
    const { bytes, size } = this.readInside(skill, path, limit);
    const truncated = size > bytes.length;
    const sniff = bytes.subarray(0, BINARY_SNIFF_BYTES);
    if (sniff.includes(0)) throw binaryError(skill, path);
    let content = decodeUtf8(bytes, truncated, true);
    if (content === undefined) throw binaryError(skill, path);
    if (truncated) content += `\n\n${truncationNotice(bytes.length, size, path)}`;
    return { name: skill.name, path, content, truncated };
  }

  /** The skill's files (not SKILL.md), of one kind when `type` is given, at most 500 with `truncated` when cut. */
  async listResources(name: string, type?: ResourceType, scope: SkillReadScope = {}): Promise<ResourceListing> {
    return this.listFiles(await this.located(this.registry.get(name, scope.snapshot), scope), type);
  }

  /**
   * The files a skill publishes (MCP, the discovery index): path, size and digest of each,
   * SKILL.md included, in path order; or why it publishes none. A store version's manifest is
   * fixed; a disk skill's comes from its scan, or with `fresh`, from its files as they are now
   * (read and hashed again only when a file's size, times or inode changed since the last look).
   */
  publishedFiles(skill: SkillRecord, fresh = false): { files: readonly ManifestEntry[] } | { problem: string } {
    if (skill.programmatic !== undefined) return { problem: 'it is registered by the application and has no files' };
    if (skill.files !== undefined && (skill.store !== undefined || !fresh)) return { files: skill.files };
    const version = this.published.versionOf(skill.path, PUBLISHED_LIMITS);
    return 'digest' in version ? { files: version.files } : { problem: version.problem };
  }

  /**
   * One published file's bytes, whole (the digest covers them all): under the same path rules as
   * readResource (never outside the skill folder), binary or not, up to the published limit.
   */
  async readPublishedFile(skill: SkillRecord, requestedPath: string): Promise<Buffer> {
    const located = await this.located(skill, {});
    const path = normalizeResourcePath(requestedPath);
    if (located.programmatic !== undefined) throw this.notFound(located, path);
    const { bytes, size } = this.readInside(located, path, PUBLISHED_LIMITS.maxBytes + 1);
    if (size > PUBLISHED_LIMITS.maxBytes) {
      throw new AppError(
        ErrorCode.RESOURCE_NOT_FOUND,
        `Resource '${path}' of skill '${skill.name}' holds more than ` +
          `${PUBLISHED_LIMITS.maxBytes} bytes, past what a published skill may hold; read it with GET ` +
          `/v1/skills/:name/resources/*.`,
        { name: skill.name, path },
      );
    }
    return bytes;
  }

  /**
   * Where to read a skill: its pinned version in a chat (below), else its folder; a store skill's
   * folder is unpacked again from the database when the cache lost it.
   */
  private async located(skill: SkillRecord, scope: SkillReadScope): Promise<SkillRecord> {
    const pinned = await this.pinned(skill, scope);
    if (pinned !== skill || skill.store === undefined || skill.digest === undefined || this.store === undefined)
      return pinned;
    const folder = await this.store.versionFolder(skill.digest, skill.name);
    return folder === undefined || folder === skill.path
      ? skill
      : { ...skill, path: folder, skillFile: join(folder, 'SKILL.md') };
  }

  /**
   * The skill as the chat activated it: when its pinned version is not the one loaded now, the
   * pinned version's unpacked folder (read from the store). A skill that is gone or switched off
   * never gets here: the registry refused it first, whatever the chat pinned. A store skill's pin
   * counts only while it is a version of the same install (a rollback keeps it, an uninstall ends it).
   */
  private async pinned(skill: SkillRecord, scope: SkillReadScope): Promise<SkillRecord> {
    const pin = scope.pins?.get(skill.name);
    if (pin === undefined || this.store === undefined || skill.programmatic !== undefined) return skill;
    // A pin to a version of an install that was since uninstalled (and perhaps installed again,
    // fixed) is void: pulling a bad skill must pull it from the chats that had it too.
    if (skill.store !== undefined && !skill.store.history.has(pin)) return skill;
    if ((await this.store.keptDigest(skill)) === pin) return skill;
    const folder = await this.store.versionFolder(pin, skill.name);
    return folder === undefined ? skill : { ...skill, path: folder, skillFile: join(folder, 'SKILL.md') };
  }

  private listFiles(skill: SkillRecord, type?: ResourceType): ResourceListing {
    if (skill.programmatic !== undefined) return listFromMemory(skill.programmatic, type);
    const root = this.realRoot(skill);
    const files: { path: string; size: number }[] = [];
    let truncated = false;
    const walk = (folder: string, depth: number): void => {
      const entries = readFolder(folder);
      entries.sort(compareByName);
      for (const entry of entries) {
        if (files.length >= LISTING_MAX_FILES) {
          truncated = true;
          return;
        }
        if (SKIPPED_FOLDERS.has(entry.name)) continue;
        const full = join(folder, entry.name);
        // Entries of a real folder are inside it by construction; only symlinks need resolving.
        const isDirectory =
          entry.isDirectory() || (entry.isSymbolicLink() && statInside(root, full)?.isDirectory() === true);
        if (isDirectory) {
          if (depth < LISTING_MAX_DEPTH) walk(full, depth + 1);
          else truncated = true;
          continue;
        }
        const info = entry.isSymbolicLink()
          ? statInside(root, full)
          : entry.isFile()
            ? statOrUndefined(full)
            : undefined;
        if (info?.isFile()) {
          const path = relative(root, full);
          if (path !== 'SKILL.md' && (type === undefined || resourceTypeOf(path) === type))
            files.push({ path, size: info.size });
        }
      }
    };
    walk(root, 1);
    return { files, truncated };
  }

  /** A programmatic skill's file: the same rules and errors as a folder's, read from the map it was registered with. */
  private readFromMemory(skill: SkillRecord, content: ProgrammaticContent, path: string, limit: number): SkillResource {
    const text = content.resources.get(path);
    if (text === undefined) {
      const isFolder = path === '.' || [...content.resources.keys()].some((file) => file.startsWith(`${path}/`));
      throw isFolder ? directoryError(skill, path) : this.notFound(skill, path);
    }
    if (text.includes('\0')) throw binaryError(skill, path);
    const capped = capUtf8(text, limit, path);
    return { name: skill.name, path, content: capped.text, truncated: capped.truncated };
  }

  private realRoot(skill: SkillRecord): string {
    try {
      return realpathSync.native(skill.path);
    } catch {
      throw skillGoneError(skill);
    }
  }

  /** The skill's SKILL.md; a skill whose SKILL.md was removed since the scan is gone, not a missing resource. */
  private readSkillMd(skill: SkillRecord, limit: number): { bytes: Buffer; size: number } {
    try {
      return this.readHead(skill, this.skillMdInside(skill), limit, 'SKILL.md');
    } catch (error) {
      if (AppError.isInstance(error) && error.code === ErrorCode.RESOURCE_NOT_FOUND) throw skillGoneError(skill);
      throw error;
    }
  }

  /**
   * The skill's SKILL.md by its real path: a SKILL.md that is a symbolic link out of the folder is refused like any
   * other file.
   */
  private skillMdInside(skill: SkillRecord): string {
    return this.resolveInside(skill, this.realRoot(skill), basename(skill.skillFile));
  }

  /** At most `limit` bytes of the skill's file at `path`, by its real path inside the skill's real folder. */
  private readInside(skill: SkillRecord, path: string, limit: number): { bytes: Buffer; size: number } {
    return this.readHead(skill, this.resolveInside(skill, this.realRoot(skill), path), limit, path);
  }

  /** Resolves symlinks and refuses anything whose real path is outside the skill's real root. */
  private resolveInside(skill: SkillRecord, root: string, path: string): string {
    let real: string;
    try {
      real = realpathSync.native(join(root, path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        throw new AppError(
          ErrorCode.RESOURCE_NOT_FOUND,
          `Resource '${path}' of skill '${skill.name}' cannot be resolved: its symbolic links form a loop.`,
          { name: skill.name, path },
        );
      }
      throw this.notFound(skill, path);
    }
    if (!isInside(root, real)) {
      this.logger.warn(`Refused '${path}' of skill '${skill.name}': it resolves to ${real}, outside ${root}`);
      throw new AppError(
        ErrorCode.RESOURCE_OUTSIDE_SKILL,
        `Resource '${path}' of skill ` +
          `'${skill.name}' leads outside the skill folder (through a symbolic link); it cannot be read.`,
        { name: skill.name, path },
      );
    }
    return real;
  }

  private notFound(skill: SkillRecord, path: string): AppError {
    let listing: ResourceListing = { files: [], truncated: false };
    try {
      listing = this.listFiles(skill);
    } catch {
      // The skill folder itself is gone: no files to suggest.
    }
    const available = listing.files.slice(0, SUGGESTION_LIMIT).map((file) => file.path);
    const hint =
      available.length > 0
        ? ` Available: ${available.join(', ')}${listing.files.length > SUGGESTION_LIMIT ? ', …' : ''}`
        : ' The skill has no other files.';
    return new AppError(ErrorCode.RESOURCE_NOT_FOUND, `Resource '${path}' not found in skill '${skill.name}'.${hint}`, {
      name: skill.name,
      path,
      available,
    });
  }

  /**
   * At most `limit` bytes of a regular file; a folder is RESOURCE_IS_DIRECTORY, anything else (a FIFO, a device, gone)
   * not found.
   */
  private readHead(
    skill: SkillRecord,
    file: string,
    limit: number,
    shownPath: string,
  ): { bytes: Buffer; size: number } {
    const head = readFileHead(file, limit);
    if (head.kind === 'directory') throw directoryError(skill, shownPath);
    if (head.kind === 'unreadable') throw this.notFound(skill, shownPath);
    return head;
  }
}

/** A programmatic skill's instructions (its description when it only runs code), cut as a SKILL.md body is. */
function activateFromMemory(skill: SkillRecord, content: ProgrammaticContent, limit: number): ActivatedSkill {
  const body = capUtf8((content.instructions ?? skill.description).trim(), limit, 'SKILL.md');
  return { name: skill.name, frontmatter: skill.frontmatter, body: body.text, truncated: body.truncated };
}

function listFromMemory(content: ProgrammaticContent, type: ResourceType | undefined): ResourceListing {
  const files = [...content.resources]
    .filter(([path]) => type === undefined || resourceTypeOf(path) === type)
    .map(([path, text]) => ({ path, size: Buffer.byteLength(text) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: files.slice(0, LISTING_MAX_FILES), truncated: files.length > LISTING_MAX_FILES };
}

function readFolder(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return [];
  }
}

function statInside(root: string, path: string): Stats | undefined {
  try {
    const real = realpathSync.native(path);
    return isInside(root, real) ? statSync(real) : undefined;
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function directoryError(skill: SkillRecord, path: string): AppError {
  return new AppError(
    ErrorCode.RESOURCE_IS_DIRECTORY,
    `Resource '${path}' of skill '${skill.name}' is a directory; name a file inside it.`,
    { name: skill.name, path },
  );
}

function binaryError(skill: SkillRecord, path: string): AppError {
  return new AppError(
    ErrorCode.RESOURCE_BINARY,
    `Resource '${path}' of skill '${skill.name}' is a binary file; only UTF-8 text can be read.`,
    { name: skill.name, path },
  );
}

/** A skill whose folder (or SKILL.md) went away since the scan. */
export function skillGoneError(skill: SkillRecord): AppError {
  return new AppError(ErrorCode.SKILL_NOT_FOUND, `Skill '${skill.name}' is no longer on disk; reload the skills.`, {
    name: skill.name,
  });
}

/**
 * Decodes UTF-8. A truncated read may end inside a character, which is dropped rather than shown
 * as garbage. With `fatal`, invalid UTF-8 gives undefined (the file is treated as binary).
 */
function decodeUtf8(bytes: Uint8Array, truncated: boolean, fatal: true): string | undefined;
function decodeUtf8(bytes: Uint8Array, truncated: boolean, fatal: false): string;
function decodeUtf8(bytes: Uint8Array, truncated: boolean, fatal: boolean): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal, ignoreBOM: false }).decode(bytes, { stream: truncated });
  } catch {
    return undefined;
  }
}
