import { parseArgs } from 'node:util';
import { AppError, ErrorCode } from '@skillhost/core';
import { loadConfig } from '../config/config-loader.js';
import type { MirrorView, SkillMirrorService } from '../domain/skills/store/skill-mirror.service.js';
import { withServices } from './cli-context.js';
import { type CliIo, UsageError } from './cli-io.js';
import { formatInstant, formatTable, printable } from './text-table.js';

const OPTIONS = { config: { type: 'string' }, json: { type: 'boolean' } } as const;

/**
 * `skillhost mirrors list | add | run | remove`, on the configured database with the admin routes' own service: the
 * same checks, the same read-only configured mirrors, the same claim on a mirror so a run here and a server's never
 * overlap.
 */
export async function mirrorsCommand(args: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'list':
      return listMirrors(rest, io);
    case 'add':
      return addMirror(rest, io);
    case 'run':
      return runMirror(rest, io);
    case 'remove':
      return removeMirror(rest, io);
    default:
      throw new UsageError(
        subcommand === undefined || subcommand.startsWith('-')
          ? 'Give a mirrors command: list, add, run or remove.'
          : `Unknown mirrors command '${subcommand}'; expected list, add, run or remove.`,
      );
  }
}

/** The mirrors' service on the database `--config` names (or the environment's). */
function onMirrors<T>(
  values: { config?: string },
  io: CliIo,
  work: (mirrors: SkillMirrorService) => Promise<T>,
): Promise<T> {
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  return withServices(config, ({ mirrors }) => work(mirrors));
}

async function listMirrors(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, allowPositionals: false, options: OPTIONS });
  const mirrors = await onMirrors(values, io, (service) => service.list());
  if (values.json) {
    io.out(JSON.stringify(mirrors, null, 2));
    return 0;
  }
  if (mirrors.length === 0) {
    io.out('No mirrors. Add one with `skillhost mirrors add NAME SOURCE` or [app.skills.mirrors.NAME].');
    return 0;
  }
  const rows = mirrors.map((m) => [
    m.name,
    m.origin,
    m.interval,
    m.running ? 'running' : formatInstant(m.nextRunAt),
    formatInstant(m.lastSuccessAt),
    m.source,
    // Last: the longest cell, and unpadded there.
    m.lastError === null || !failedLast(m) ? '-' : oneLine(m.lastError),
  ]);
  for (const line of formatTable(
    ['NAME', 'ORIGIN', 'INTERVAL', 'NEXT RUN', 'LAST SUCCESS', 'SOURCE', 'LAST ERROR'],
    rows,
  ))
    io.out(line);
  return 0;
}

async function addMirror(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...OPTIONS, interval: { type: 'string' } },
  });
  if (positionals.length !== 2)
    throw new UsageError(`mirrors add takes a NAME and a SOURCE; got ${positionals.length} argument(s).`);
  const [name, source] = positionals;
  const added = await onMirrors(values, io, async (service) => {
    try {
      return await service.add({ name, source, interval: values.interval }, null);
    } catch (error) {
      // A bad name, source or interval is the caller's to fix, as a 400 is over HTTP: exit code 2, with the usage.
      if (AppError.isInstance(error) && error.code === ErrorCode.VALIDATION_FAILED) throw new UsageError(error.message);
      throw error;
    }
  });
  io.out(
    values.json
      ? JSON.stringify(added, null, 2)
      : `Added mirror '${added.name}' of ${added.source}, every ${added.interval}. It is due now: a server on ` +
          `this database runs it within seconds, or run it here (skillhost mirrors run ${added.name}).`,
  );
  return 0;
}

/** Runs the import now and waits for it; exit code 1 when it failed (the last good versions keep serving). */
async function runMirror(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  if (positionals.length !== 1) throw new UsageError(`mirrors run takes one NAME; got ${positionals.length}.`);
  const mirror = await onMirrors(values, io, (service) => service.runNow(positionals[0]));
  const failed = failedLast(mirror);
  if (values.json) io.out(JSON.stringify(mirror, null, 2));
  else if (failed) io.err(`Mirror '${mirror.name}' of ${mirror.source} failed: ${oneLine(mirror.lastError ?? '')}`);
  else {
    const skills = mirror.lastResult?.skills ?? [];
    if (skills.length === 0) io.out(`Mirror '${mirror.name}': its source has no skills.`);
    for (const skill of skills) io.out(`${ranLine(skill)} '${skill.name}' version ${skill.version} (${skill.digest}).`);
  }
  if (!values.json)
    for (const warning of failed ? [] : (mirror.lastResult?.warnings ?? [])) io.err(`warning: ${warning}`);
  return failed ? 1 : 0;
}

function ranLine(skill: NonNullable<MirrorView['lastResult']>['skills'][number]): string {
  if (skill.held) return 'Kept (rolled back there by an admin):';
  return skill.created ? 'Installed shared skill' : 'Unchanged: shared skill';
}

async function removeMirror(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  if (positionals.length !== 1) throw new UsageError(`mirrors remove takes one NAME; got ${positionals.length}.`);
  const [name] = positionals;
  await onMirrors(values, io, (service) => service.remove(name));
  io.out(
    values.json
      ? JSON.stringify({ name, removed: true })
      : `Removed mirror '${name}'; the skills it installed stay (skillhost uninstall NAME removes one).`,
  );
  return 0;
}

/** Whether the mirror's latest run failed: its last error is later than its last success. */
function failedLast(mirror: MirrorView): boolean {
  if (mirror.lastErrorAt === null) return false;
  return mirror.lastSuccessAt === null || mirror.lastErrorAt > mirror.lastSuccessAt;
}

function oneLine(text: string): string {
  return printable(text.replace(/\s*\n\s*/g, ' '));
}
