import { type FSWatcher, watch } from 'node:fs';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type SkillsConfig } from '../../config/app-config.js';
import { PROCESS_ROLE, type ProcessRole } from '../../config/process-role.js';
import { type CatalogueSnapshot, diffCatalogues } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';

/** How long the folders must be quiet before a reload: an editor's save or a `git pull` is many events. */
export const WATCH_DEBOUNCE_MS = 300;

/**
 * `[app.skills] watch = true`: reloads the skills (and commands) directories shortly after a change
 * on disk, and logs what the reload added, removed and changed. Off by default; a directory that does not
 * exist (or cannot be watched) is skipped with a warning, never an error.
 */
@Injectable()
export class SkillWatcherService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(SkillWatcherService.name);
  private readonly config: SkillsConfig;
  private readonly commandDirectories: readonly { configured: string; path: string }[];
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) appConfig: AppConfig,
    private readonly registry: SkillRegistryService,
    @Optional() @Inject(PROCESS_ROLE) private readonly role?: ProcessRole,
  ) {
    this.config = appConfig.app.skills;
    this.commandDirectories = appConfig.app.commands.directories;
  }

  onApplicationBootstrap(): void {
    if (!this.config.enabled || !this.config.watch || this.role?.runsBackgroundWork === false) return;
    for (const directory of [...this.config.directories, ...this.config.codeDirectories, ...this.commandDirectories]) {
      try {
        const watcher = watch(directory.path, { recursive: true, persistent: false }, () => this.changed());
        watcher.on('error', (error) =>
          this.logger.warn(`Stopped watching ${directory.configured} (${directory.path}): ${error.message}`),
        );
        this.watchers.push(watcher);
      } catch (error) {
        this.logger.warn(
          `Not watching ${directory.configured} (${directory.path}): ` +
            `${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
    }
    this.logger.log(
      `Watching ${this.watchers.length} skills/commands ` +
        `director${this.watchers.length === 1 ? 'y' : 'ies'} for changes`,
    );
  }

  onModuleDestroy(): void {
    clearTimeout(this.timer);
    for (const watcher of this.watchers) watcher.close();
    this.watchers.length = 0;
  }

  private changed(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), WATCH_DEBOUNCE_MS);
    this.timer.unref();
  }

  private async reload(): Promise<void> {
    const before = this.registry.snapshot;
    try {
      const after = await this.registry.reload();
      this.logger.log(`Skills changed on disk: ${await describeChange(before, after)}`);
    } catch (error) {
      this.logger.error(`Reload after a change on disk failed: ${(error as Error).message}`);
    }
  }
}

/**
 * Which skills a reload added, removed and changed (with the old and new digest), and which commands it added and
 * removed.
 */
export async function describeChange(before: CatalogueSnapshot, after: CatalogueSnapshot): Promise<string> {
  const byName = (a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>) => ({
    added: [...b.keys()].filter((k) => !a.has(k)),
    removed: [...a.keys()].filter((k) => !b.has(k)),
  });
  const skills = await diffCatalogues(before, after);
  const commands = byName(before.commands, after.commands);
  const parts = [
    skills.added.length > 0 ? `added ${skills.added.map((s) => s.name).join(', ')}` : '',
    skills.removed.length > 0 ? `removed ${skills.removed.map((s) => s.name).join(', ')}` : '',
    skills.changed.length > 0
      ? `changed ${skills.changed.map((s) => `${s.name} (${short(s.oldDigest)} → ${short(s.newDigest)})`).join(', ')}`
      : '',
    commands.added.length > 0 ? `commands added ${commands.added.join(', ')}` : '',
    commands.removed.length > 0 ? `commands removed ${commands.removed.join(', ')}` : '',
  ].filter((part) => part !== '');
  return (
    `${parts.join('; ') || 'no skill or command added, removed or changed'} (${after.skills.size} skills, ` +
    `${after.invalid.length} invalid)`
  );
}

/** The first 12 hex digits of a digest: enough to tell versions apart in a log line. */
function short(digest: string | null): string {
  return digest === null ? 'none' : digest.slice(0, 'sha256:'.length + 12);
}
