import { isUtf8 } from 'node:buffer';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { type Skill, SKILL_LIMITS, SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import {
  AppError,
  type CatalogueSnapshot,
  contentDigest,
  ErrorCode,
  type ManifestEntry,
  type SkillRecord,
} from '@skillhost/core';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { mimeTypeOf, parseSkillUri, skillFileUri } from './skill-uri.js';
import { ViewCache } from './view-cache.js';

/** A skill as it is published: its MCP entry, and its files by path (for reads and directories). */
export interface PublishedSkill {
  readonly record: SkillRecord;
  readonly entry: Skill;
  readonly files: ReadonlyMap<string, ManifestEntry>;
}

/** One page of a view's published skills; `next` names the last when more remain. */
export interface PublishedPage {
  readonly skills: readonly PublishedSkill[];
  readonly next?: string;
  /** Whether the page holds for as long as its view does (no skill left out for a reason that may pass). */
  readonly lasting: boolean;
}

/** A skill of a user's catalogue that is not published, and why (the admin view lists them). */
export interface LeftOutSkill {
  readonly name: string;
  /** The owner of a personal skill; null for a team skill. */
  readonly owner: string | null;
  readonly reason: string;
  /** The reason may pass (a read that failed): not remembered. */
  readonly transient?: boolean;
}

/** One file of a published skill as `resources/read` and the discovery index serve it. */
export interface PublishedFile {
  readonly bytes: Buffer;
  /** Of these bytes, as read (a file edited since the listing has another than its entry's). */
  readonly digest: string;
  readonly mimeType: string;
  /** UTF-8 without NUL: sent as `text`; anything else as a base64 `blob`. */
  readonly isText: boolean;
}

/** A directory's direct children, as `resources/directory/read` lists them. */
export interface DirectoryChild {
  uri: string;
  name: string;
  mimeType: string;
  size?: number;
}

const DIRECTORY_MIME_TYPE = 'inode/directory';
/** Pages remembered per view: a walk needs one per page (20 for 2,000 skills at the default page size). */
export const PAGES_PER_VIEW = 256;
/** Frontmatters remembered by the digest of their SKILL.md: a reload of unchanged skills parses nothing again. */
const FRONTMATTER_MEMO = 20_000;

/**
 * The skills a user's catalogue publishes over MCP and in the discovery index. Each entry carries
 * the skill's frontmatter as the MCP SDK reads it (the same parser its clients verify with) and the
 * files of its version with their digests: a store version's manifest, a disk skill's from its scan,
 * and, for one skill asked for by URI, from its files as they are now. Nothing here reads every
 * file for a listing: a SKILL.md is read once per version, for its frontmatter.
 */
@Injectable()
export class PublishedSkillsService implements OnModuleDestroy {
  private readonly logger = new Logger('McpSkills');
  /** Entries built for a record of a snapshot; a record is immutable, a reload makes new ones. */
  private readonly entries = new WeakMap<SkillRecord, PublishedSkill | LeftOutSkill>();
  /** Frontmatters by skill name and SKILL.md digest (a promise, so concurrent listings read a file once). */
  private readonly frontmatters = new Map<string, Promise<FrontmatterRead>>();
  private readonly reported = new Set<string>();
  private readonly pages = new ViewCache<PublishedPage>(PAGES_PER_VIEW);
  private rescan: NodeJS.Timeout | undefined;

  constructor(
    private readonly resources: SkillResourcesService,
    private readonly registry: SkillRegistryService,
  ) {}

  /** The skill published, or why not; `fresh` re-checks a disk skill's files against the disk first. */
  async publish(record: SkillRecord, fresh = false): Promise<PublishedSkill | LeftOutSkill> {
    if (!fresh) {
      const known = this.entries.get(record);
      if (known !== undefined) return known;
    }
    const built = await this.build(record, fresh);
    // Remembered for the record: a published entry, or a lasting verdict from the scan's files; a
    // failed read (a store skill that cannot be unpacked now) is asked again next time.
    if (isPublished(built) || (!fresh && built.transient !== true)) this.entries.set(record, built);
    if (!isPublished(built)) this.reportOnce(built, record);
    if (fresh && isPublished(built) && drifted(record, built)) this.rescanSoon();
    return built;
  }

  /**
   * A disk skill found changed since the scan (by a `skills/get`, a read or an index file) makes
   * this instance rescan, as `watch` would: the listings and the discovery index, built from the
   * snapshot, then describe the files as they are, and clients hear of the change. At most one
   * rescan a few seconds.
   */
  private rescanSoon(): void {
    if (this.rescan !== undefined) return;
    this.rescan = setTimeout(() => {
      this.registry
        .reload()
        .catch((error: Error) => this.logger.warn(`A rescan after a skill changed on disk failed: ${error.message}`))
        .finally(() => (this.rescan = undefined));
    }, RESCAN_DELAY_MS);
    this.rescan.unref();
  }

  onModuleDestroy(): void {
    clearTimeout(this.rescan);
  }

  /**
   * One page of the view's published skills in name order, after `after` (a name); `next` when more remain. A view
   * never changes (a reload or a filter change makes another), so a page is made once per view, cursor and size: a
   * walk of every page costs one pass over the view, not one per page. A page holding a skill left out for a reason
   * that may pass (a store skill that could not be unpacked) is made again next time.
   */
  page(view: CatalogueSnapshot, after: string | undefined, size: number): Promise<PublishedPage> {
    return this.pages.get(
      view,
      `${size}\0${after ?? ''}`,
      () => this.makePage(view, after, size),
      (page) => page.lasting,
    );
  }

  private async makePage(view: CatalogueSnapshot, after: string | undefined, size: number): Promise<PublishedPage> {
    const skills: PublishedSkill[] = [];
    let lasting = true;
    for (const record of recordsAfter(view, after)) {
      if (skills.length === size) return { skills, next: skills[skills.length - 1].record.name, lasting };
      const published = await this.publish(record);
      if (isPublished(published)) skills.push(published);
      else if (published.transient === true) lasting = false;
    }
    return { skills, lasting };
  }

  /** Every published skill of the view, in name order. */
  async all(view: CatalogueSnapshot): Promise<PublishedSkill[]> {
    return [...(await this.page(view, undefined, Number.MAX_SAFE_INTEGER)).skills];
  }

  /**
   * What `GET /v1/admin/mcp` reports of a snapshot: every skill (team, shared with groups, personal) and those not
   * published, with why.
   */
  async report(snapshot: CatalogueSnapshot): Promise<{ skills: number; published: number; leftOut: LeftOutSkill[] }> {
    const records = [
      ...snapshot.skills.values(),
      ...snapshot.groupOnly.skills,
      ...[...snapshot.personal.values()].flatMap((personal) => [...personal.skills.values()]),
    ];
    const leftOut: LeftOutSkill[] = [];
    for (const record of records) {
      const published = await this.publish(record);
      if (!isPublished(published))
        leftOut.push({ name: published.name, owner: published.owner, reason: published.reason });
    }
    return { skills: records.length, published: records.length - leftOut.length, leftOut };
  }

  /** The skill whose SKILL.md `uri` names, as it is now; undefined when the view serves none there. */
  async skillAt(view: CatalogueSnapshot, uri: string): Promise<PublishedSkill | undefined> {
    const parsed = parseSkillUri(uri);
    if (parsed === undefined || parsed.path !== 'SKILL.md') return undefined;
    return this.current(view, parsed.name);
  }

  /** A published file's content; undefined when `uri` names no file of a skill the view serves. */
  async file(view: CatalogueSnapshot, uri: string): Promise<PublishedFile | undefined> {
    const parsed = parseSkillUri(uri);
    if (parsed === undefined || parsed.path === '') return undefined;
    const skill = await this.current(view, parsed.name);
    if (skill === undefined || !skill.files.has(parsed.path)) return undefined;
    return this.readFile(skill, parsed.path);
  }

  /**
   * A file the discovery index lists, by skill name and path: the skill as its files are now, the
   * file only if the index lists it. SKILL_NOT_FOUND / SKILL_DISABLED for a skill the caller does
   * not have, RESOURCE_NOT_FOUND naming why for a file the index does not list.
   */
  async indexedFile(view: CatalogueSnapshot, name: string, path: string): Promise<PublishedFile> {
    const record = this.registry.get(name, view);
    const published = await this.publish(record, true);
    if (!isPublished(published))
      throw new AppError(
        ErrorCode.RESOURCE_NOT_FOUND,
        `Skill '${record.name}' is not in the discovery index: ${published.reason}.`,
        { name: record.name, path },
      );
    if (!published.files.has(path)) {
      const listed = [...published.files.keys()].slice(0, 20);
      throw new AppError(
        ErrorCode.RESOURCE_NOT_FOUND,
        `Resource '${path}' is not a file of skill '${record.name}' in the discovery index. Its files: ` +
          `${listed.join(', ')}`,
        { name: record.name, path, available: listed },
      );
    }
    return this.readFile(published, path);
  }

  private async readFile(skill: PublishedSkill, path: string): Promise<PublishedFile> {
    const bytes = await this.resources.readPublishedFile(skill.record, path);
    return {
      bytes,
      digest: contentDigest(bytes),
      mimeType: mimeTypeOf(path),
      isText: isUtf8(bytes) && !bytes.includes(0),
    };
  }

  /**
   * The direct children of a directory of a served skill (`skill://name` is its root); undefined when `uri` is no such
   * directory.
   */
  async directory(view: CatalogueSnapshot, uri: string): Promise<DirectoryChild[] | undefined> {
    const parsed = parseSkillUri(uri);
    if (parsed === undefined) return undefined;
    const skill = await this.current(view, parsed.name);
    if (skill === undefined) return undefined;
    const prefix = parsed.path === '' ? '' : `${parsed.path}/`;
    const children = new Map<string, DirectoryChild>();
    for (const file of skill.files.values()) {
      if (!file.path.startsWith(prefix)) continue;
      const rest = file.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      const child = slash === -1 ? rest : rest.slice(0, slash);
      if (children.has(child)) continue;
      const path = prefix + child;
      children.set(
        child,
        slash === -1
          ? { uri: skillFileUri(skill.record.name, path), name: child, mimeType: mimeTypeOf(path), size: file.size }
          : { uri: skillFileUri(skill.record.name, path), name: child, mimeType: DIRECTORY_MIME_TYPE },
      );
    }
    // A path that is a file, or that no file lies under, is no directory.
    return children.size === 0 ? undefined : [...children.values()];
  }

  private async current(view: CatalogueSnapshot, name: string): Promise<PublishedSkill | undefined> {
    const record = view.skills.get(name);
    if (record === undefined) return undefined;
    const published = await this.publish(record, true);
    return isPublished(published) ? published : undefined;
  }

  private async build(record: SkillRecord, fresh: boolean): Promise<PublishedSkill | LeftOutSkill> {
    const leftOut = (reason: string, transient = false): LeftOutSkill => ({
      name: record.name,
      owner: record.store?.owner ?? null,
      reason,
      ...(transient ? { transient } : {}),
    });
    if (record.code !== undefined) return leftOut('it is a code skill: it runs on this server, not in the client');
    const found = this.resources.publishedFiles(record, fresh);
    if ('problem' in found) return leftOut(`its files cannot be published: ${found.problem}`);
    const files = new Map(found.files.map((file) => [file.path, file]));
    const skillMd = files.get('SKILL.md');
    if (skillMd === undefined)
      return leftOut('it has no SKILL.md file inside its folder (a symbolic link out of it, or a lowercase skill.md)');
    const total = found.files.reduce((sum, file) => sum + file.size, 0);
    if (found.files.length > SKILL_LIMITS.files)
      return leftOut(`it has ${found.files.length} files; the MCP Skills extension allows ${SKILL_LIMITS.files}`);
    if (total > SKILL_LIMITS.bytes)
      return leftOut(`its files hold ${total} bytes; the MCP Skills extension allows ${SKILL_LIMITS.bytes}`);
    const read = await this.frontmatterFor(record, skillMd.digest);
    if (!read.ok) {
      // SKILL.md changed since its digest was taken: take the files as they are now, once.
      if (read.problem === STALE && !fresh) return this.build(record, true);
      return leftOut(read.problem, read.transient);
    }
    const entry: Skill = {
      uri: skillFileUri(record.name),
      frontmatter: read.frontmatter,
      resources: found.files.map((file) => ({
        uri: skillFileUri(record.name, file.path),
        digest: file.digest,
        size: file.size,
      })),
    };
    return { record, entry, files };
  }

  /**
   * The frontmatter of the skill's SKILL.md whose digest is `digest`, as the MCP SDK parses it
   * (YAML 1.2 core types, the extension's rules checked): read and parsed once per digest.
   */
  private frontmatterFor(record: SkillRecord, digest: string): Promise<FrontmatterRead> {
    const key = `${record.name}\0${digest}`;
    let parsed = this.frontmatters.get(key);
    if (parsed === undefined) {
      parsed = this.parseFrontmatter(record, digest);
      if (this.frontmatters.size >= FRONTMATTER_MEMO) this.frontmatters.clear();
      this.frontmatters.set(key, parsed);
      // A read that failed, or found the file changed, says nothing about that digest: forget it.
      void parsed.then((result) => !result.ok && result.transient && this.frontmatters.delete(key));
    }
    return parsed;
  }

  private async parseFrontmatter(record: SkillRecord, digest: string): Promise<FrontmatterRead> {
    let bytes: Buffer;
    try {
      bytes = await this.resources.readPublishedFile(record, 'SKILL.md');
    } catch (error) {
      return { ok: false, problem: `its SKILL.md cannot be read: ${(error as Error).message}`, transient: true };
    }
    if (contentDigest(bytes) !== digest) return { ok: false, problem: STALE, transient: true };
    try {
      return { ok: true, frontmatter: (await skillEntry(record.name, { 'SKILL.md': bytes })).frontmatter };
    } catch (error) {
      if (error instanceof SkillCatalogError)
        return {
          ok: false,
          problem: `the MCP Skills extension refuses it: ${error.problems
            .map((problem) => problem.message)
            .join('; ')}`,
          transient: false,
        };
      return { ok: false, problem: `its SKILL.md cannot be published: ${(error as Error).message}`, transient: false };
    }
  }

  private reportOnce(leftOut: LeftOutSkill, record: SkillRecord): void {
    const key = `${record.path}\0${record.digest ?? ''}\0${leftOut.reason}`;
    if (this.reported.has(key)) return;
    if (this.reported.size >= FRONTMATTER_MEMO) this.reported.clear();
    this.reported.add(key);
    this.logger.warn(
      `Skill '${leftOut.name}'${leftOut.owner === null ? '' : ` (personal, ${leftOut.owner})`} is not served ` +
        `over MCP: ${leftOut.reason}`,
    );
  }
}

const STALE = 'its SKILL.md changed while it was read';
/** A rescan waits this long after a change is found, so a folder being written is read once, whole. */
const RESCAN_DELAY_MS = 500;

/** Whether a disk skill's files now differ from the ones its snapshot record was scanned with. */
function drifted(record: SkillRecord, published: PublishedSkill): boolean {
  if (record.store !== undefined || record.files === undefined) return false;
  if (record.files.length !== published.files.size) return true;
  return record.files.some((file) => published.files.get(file.path)?.digest !== file.digest);
}

type FrontmatterRead =
  | { ok: true; frontmatter: Skill['frontmatter'] }
  | { ok: false; problem: string; transient: boolean };

/** The view's skills in name order after `after` (a name; all when undefined), read lazily. */
export function* recordsAfter(view: CatalogueSnapshot, after: string | undefined): Generator<SkillRecord> {
  const records = inOrder(view);
  for (let index = firstAfter(records, after); index < records.length; index++) yield records[index];
}

/** A view's skills are in name order (code units, as `>` compares): the first after `after` is found by halves. */
function firstAfter(records: readonly SkillRecord[], after: string | undefined): number {
  if (after === undefined) return 0;
  let low = 0;
  let high = records.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (records[middle].name > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

const ordered = new WeakMap<CatalogueSnapshot, readonly SkillRecord[]>();

/** The view's skills as an array, made once per view. */
function inOrder(view: CatalogueSnapshot): readonly SkillRecord[] {
  let records = ordered.get(view);
  if (records === undefined) {
    records = [...view.skills.values()];
    ordered.set(view, records);
  }
  return records;
}

export function isPublished(value: PublishedSkill | LeftOutSkill): value is PublishedSkill {
  return 'entry' in value;
}
