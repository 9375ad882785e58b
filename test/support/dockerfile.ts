import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, posix } from 'node:path';

/**
 * A Dockerfile built without Docker, for a machine (and CI) that has no engine: its stages are
 * assembled in folders from exactly what each COPY brings (context files with .dockerignore
 * applied, or another stage's output), and its RUN steps run there as written. Only `npm ci` is
 * stood in for (see `installDependencies`). What it cannot do faithfully (a base image's files,
 * paths outside the stage's WORKDIR, wildcards, ARG) it refuses, so a Dockerfile that grows
 * beyond it fails the test rather than passing untested.
 */

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  name: string | undefined;
  base: string;
  instructions: Instruction[];
}

/** Stages in order, each with its instructions: continuation lines joined, comments and parser directives dropped. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let logical = lines[i].trim();
    if (logical === '' || logical.startsWith('#')) continue;
    while (logical.endsWith('\\') && i + 1 < lines.length) {
      const next = lines[++i].trim();
      logical = `${logical.slice(0, -1).trimEnd()} ${next.startsWith('#') ? '' : next}`.trimEnd();
    }
    const [keyword, ...rest] = logical.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: logical.slice(keyword.length).trim(), line: start };
    if (instruction.keyword === 'FROM') {
      const [base, as, name] = rest;
      if (as !== undefined && (as.toUpperCase() !== 'AS' || name === undefined))
        throw new Error(`Dockerfile line ${start}: cannot read FROM ${instruction.args}`);
      stages.push({ name, base, instructions: [] });
    } else if (stages.length === 0) {
      throw new Error(`Dockerfile line ${start}: ${instruction.keyword} before the first FROM`);
    } else {
      stages[stages.length - 1].instructions.push(instruction);
    }
  }
  return stages;
}

/**
 * Whether a context path (relative, `/`-separated) is left out by .dockerignore: the last pattern matching it or a
 * parent folder decides, as Docker does.
 */
export type IgnoreMatcher = ((path: string) => boolean) & { canReinclude(folder: string): boolean };

export function dockerignore(text: string): IgnoreMatcher {
  const patterns = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const cleaned = posix.normalize((negated ? line.slice(1) : line).trim().replace(/^\/+/, ''));
      return { negated, cleaned, regex: globToRegex(cleaned) };
    });
  const matches = (path: string) => {
    const parts = path.split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const pattern of patterns)
      if (candidates.some((candidate) => pattern.regex.test(candidate))) excluded = !pattern.negated;
    return excluded;
  };
  // A left-out folder is still walked when an exception could bring back something inside it.
  const canReinclude = (folder: string) =>
    patterns.some(
      (p) =>
        p.negated &&
        (/^[*?[]/.test(p.cleaned) ||
          p.cleaned.startsWith('**') ||
          p.cleaned === folder ||
          p.cleaned.startsWith(`${folder}/`)),
    );
  return Object.assign(matches, { canReinclude });
}

/** Go's filepath.Match syntax plus `**`, as Docker reads .dockerignore. */
function globToRegex(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i);
      source += pattern
        .slice(i, end + 1)
        .replace('[^', '[^/')
        .replace(/^\[!/, '[^/');
      i = end;
    } else if (c === '\\') source += `\\${pattern[++i]}`;
    else source += c.replace(/[.+^${}()|\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** Every file and symlink the build context holds (relative paths), .dockerignore applied. */
export function contextFiles(root: string, ignored: IgnoreMatcher): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!ignored(path) || ignored.canReinclude(path)) walk(path);
      } else if (!ignored(path)) {
        files.push(path);
      }
    }
  };
  walk('');
  return files.sort();
}

/** A stage as built: its folder (standing for its WORKDIR) and what the image records. */
export interface BuiltStage {
  name: string | undefined;
  dir: string;
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  exposed: string[];
  /** In exec form; the image runs ENTRYPOINT followed by CMD. */
  entrypoint: string[];
  cmd: string[];
  /** Each RUN step with its output, for failure messages. */
  runs: { command: string; output: string }[];
  /** The context files its COPY steps brought in. */
  copiedFromContext: Set<string>;
}

export interface BuildOptions {
  /** The build context: the repository's folder. */
  context: string;
  ignored: IgnoreMatcher;
  /** Where the stages' folders are made. */
  into: string;
  /** The repository's installed dependencies, which `npm ci` stands on (see `installDependencies`). */
  nodeModules: string;
}

/** Builds every stage in order; a step that fails throws with what it printed. */
export async function buildStages(stages: Stage[], options: BuildOptions): Promise<BuiltStage[]> {
  const context = contextFiles(options.context, options.ignored);
  const built: BuiltStage[] = [];
  for (const [index, stage] of stages.entries()) {
    if (!/^node:[\w.-]+$/.test(stage.base))
      throw new Error(`FROM ${stage.base}: only a node image can be stood in for (this machine's Node.js)`);
    const state: BuiltStage = {
      name: stage.name,
      dir: join(options.into, `stage-${index}`),
      workdir: '',
      env: {},
      user: undefined,
      exposed: [],
      entrypoint: [],
      cmd: [],
      runs: [],
      copiedFromContext: new Set(),
    };
    mkdirSync(state.dir, { recursive: true });
    for (const instruction of stage.instructions)
      await step(instruction, state, { ...options, contextList: context, built });
    built.push(state);
  }
  return built;
}

interface StepContext extends BuildOptions {
  contextList: string[];
  built: BuiltStage[];
}

async function step(instruction: Instruction, state: BuiltStage, ctx: StepContext): Promise<void> {
  const where = `Dockerfile line ${instruction.line} (${instruction.keyword} ${instruction.args})`;
  try {
    switch (instruction.keyword) {
      case 'WORKDIR':
        if (!instruction.args.startsWith('/')) throw new Error('WORKDIR must be absolute');
        if (state.workdir !== '' && state.workdir !== instruction.args)
          throw new Error('a second WORKDIR in a stage is not stood in for');
        state.workdir = instruction.args;
        return;
      case 'ENV':
        Object.assign(state.env, parseEnv(instruction.args));
        return;
      case 'COPY':
        return copy(instruction.args, state, ctx);
      case 'RUN':
        return await run(instruction.args, state, ctx);
      case 'USER':
        state.user = instruction.args;
        return;
      case 'EXPOSE':
        state.exposed.push(...instruction.args.split(/\s+/));
        return;
      case 'CMD':
        state.cmd = execForm(instruction.args);
        return;
      case 'ENTRYPOINT':
        state.entrypoint = execForm(instruction.args);
        return;
      case 'LABEL':
      case 'STOPSIGNAL':
      case 'HEALTHCHECK':
        return;
      default:
        throw new Error(`${instruction.keyword} is not stood in for by this test`);
    }
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}

/** `ENV A=1 B="two words"` (no variable references: they would need the image's environment). */
function parseEnv(args: string): Record<string, string> {
  if (args.includes('$')) throw new Error('variable references in ENV are not stood in for');
  const env: Record<string, string> = {};
  const pair = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)\s*/y;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = pair.exec(args)) !== null) {
    env[match[1]] = match[2].startsWith('"') ? (JSON.parse(match[2]) as string) : match[2];
    consumed = pair.lastIndex;
  }
  if (consumed !== args.length) throw new Error('expected KEY=value pairs');
  return env;
}

function execForm(args: string): string[] {
  if (!args.startsWith('[')) return ['/bin/sh', '-c', args];
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
    throw new Error('expected a JSON array of strings');
  return parsed;
}

/** Leading `--name=value` flags, and what follows them. */
function splitFlags(args: string): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args;
  for (
    let match = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest);
    match !== null;
    match = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)
  ) {
    flags.set(match[1], match[2] ?? '');
    rest = rest.slice(match[0].length);
  }
  return { flags, rest };
}

/** The folder standing for an absolute path inside a stage's WORKDIR; anything else is refused. */
export function hostPath(state: BuiltStage, containerPath: string): string {
  if (state.workdir === '') throw new Error('no WORKDIR yet: paths would land in the base image');
  const absolute = posix.resolve(state.workdir, containerPath);
  const relative = posix.relative(state.workdir, absolute);
  if (relative.startsWith('..')) throw new Error(`${containerPath} is outside WORKDIR ${state.workdir}`);
  return join(state.dir, relative);
}

/**
 * COPY [--from=STAGE] [--chown=…] SRC… DEST: a folder's contents go into DEST, as Docker copies them. Ownership and
 * mode flags change no content.
 */
function copy(args: string, state: BuiltStage, ctx: StepContext): void {
  const { flags, rest } = splitFlags(args);
  for (const flag of flags.keys())
    if (!['from', 'chown', 'chmod', 'link'].includes(flag)) throw new Error(`COPY --${flag} is not stood in for`);
  const parts = rest.startsWith('[') ? execForm(rest) : rest.split(/\s+/);
  const sources = parts.slice(0, -1);
  const dest = parts[parts.length - 1];
  if (sources.length === 0) throw new Error('COPY needs a source and a destination');
  if (sources.some((s) => /[*?[]/.test(s))) throw new Error('wildcards in COPY are not stood in for');
  const intoFolder = sources.length > 1 || dest.endsWith('/');
  const target = hostPath(state, dest);
  const from = flags.get('from');
  for (const source of sources) {
    const files = from === undefined ? fromContext(source, ctx) : fromStage(from, source, ctx);
    if (from === undefined)
      for (const file of files) state.copiedFromContext.add(posix.relative(ctx.context, file.path));
    if (files.length === 0)
      throw new Error(
        `"${source}" is not in the build ` +
          `context${from === undefined ? ' (or .dockerignore leaves it out)' : ` of stage ${from}`}`,
      );
    for (const file of files) {
      const destination =
        file.inside === '' ? (intoFolder ? join(target, posix.basename(source)) : target) : join(target, file.inside);
      mkdirSync(dirname(destination), { recursive: true });
      copyEntry(file.path, destination);
    }
  }
}

/** A source's files: `inside` is the path under the source folder ('' when the source is a file). */
interface SourceFile {
  path: string;
  inside: string;
}

function fromContext(source: string, ctx: StepContext): SourceFile[] {
  const cleaned = posix.normalize(source).replace(/^(\.\/)+|\/+$/g, '');
  if (cleaned.startsWith('..') || cleaned.startsWith('/')) throw new Error(`${source} is outside the build context`);
  if (cleaned === '.' || cleaned === '')
    return ctx.contextList.map((path) => ({ path: join(ctx.context, path), inside: path }));
  if (ctx.contextList.includes(cleaned)) return [{ path: join(ctx.context, cleaned), inside: '' }];
  return ctx.contextList
    .filter((path) => path.startsWith(`${cleaned}/`))
    .map((path) => ({ path: join(ctx.context, path), inside: path.slice(cleaned.length + 1) }));
}

function fromStage(name: string, source: string, ctx: StepContext): SourceFile[] {
  const stage = ctx.built.find((s, i) => s.name === name || String(i) === name);
  if (stage === undefined) throw new Error(`no earlier stage named ${name}`);
  const root = hostPath(stage, source);
  if (!existsSync(root)) return [];
  if (!lstatSync(root).isDirectory()) return [{ path: root, inside: '' }];
  const files: SourceFile[] = [];
  const walk = (relative: string) => {
    const entries = readdirSync(join(root, relative), { withFileTypes: true });
    // An empty folder is copied too (Docker copies folders, not only files).
    if (entries.length === 0 && relative !== '') files.push({ path: join(root, relative), inside: relative });
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.push({ path: join(root, path), inside: path });
    }
  };
  walk('');
  return files;
}

function copyEntry(from: string, to: string): void {
  const stat = lstatSync(from);
  if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
  else if (stat.isDirectory()) mkdirSync(to, { recursive: true });
  else cpSync(from, to, { preserveTimestamps: true });
}

/**
 * RUN [--mount=type=cache,…] COMMAND, in the stage's folder with the stage's ENV. A command naming
 * an absolute path would reach this machine's filesystem rather than the image's, so it is refused.
 */
async function run(args: string, state: BuiltStage, ctx: StepContext): Promise<void> {
  const { flags, rest } = splitFlags(args);
  for (const [flag, value] of flags)
    if (flag !== 'mount' || !value.startsWith('type=cache,'))
      throw new Error(`RUN --${flag}=${value} is not stood in for (only cache mounts, which change no output)`);
  if (rest.startsWith('[')) throw new Error('RUN in exec form is not stood in for');
  const cwd = hostPath(state, '.');
  mkdirSync(cwd, { recursive: true });
  const npmCi = /^npm ci((?:\s+--[a-z-]+(?:=\S+)?)*)\s*$/.exec(rest);
  if (npmCi !== null) return installDependencies(npmCi[1].trim().split(/\s+/).filter(Boolean), state, ctx);
  if (/(^|[\s=:'"<>|;&])\//.test(rest))
    throw new Error("the command names an absolute path, which would be this machine's, not the image's");
  await shell(rest, cwd, state);
}

/**
 * The environment a RUN step sees: the image's PATH stands for this machine's, HOME is the stage's
 * own, and npm stays offline (tests reach nothing but 127.0.0.1; the registry's update notice and
 * audit change no output).
 */
function stageEnvironment(state: BuiltStage): Record<string, string> {
  const npmOffline = {
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: join(state.dir, '..', `${posix.basename(state.dir)}-home`),
    ...npmOffline,
    ...state.env,
  };
}

async function shell(command: string, cwd: string, state: BuiltStage): Promise<void> {
  const child = spawn('/bin/sh', ['-c', command], {
    cwd,
    env: stageEnvironment(state),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  state.runs.push({ command, output });
  if (code !== 0) throw new Error(`\`${command}\` exited with ${code}:\n${output}`);
}

const LIFECYCLE_OF_NPM_CI = [
  'preinstall',
  'install',
  'postinstall',
  'prepublish',
  'preprepare',
  'prepare',
  'postprepare',
];

/**
 * `npm ci`, stood in for: the registry is off limits to tests, and a real `npm ci --offline` from
 * the npm cache takes 30 s for the production dependencies alone (60 s and more for all) on a
 * 2-core machine, once per run. The lockfile copied into the stage must be the repository's, whose
 * node_modules npm ci made from it. The stage gets a node_modules of its own, hard-linked from that
 * one in under a second (a later step that deletes or adds files there leaves the repository's
 * alone): all of it for a full install; for one with omissions (`--omit=dev|optional|peer`, or
 * NODE_ENV=production) exactly the packages npm would keep (its own rule on the lockfile's
 * dev/optional/peer flags), so code that needs an omitted package fails to find it. Unless
 * `--ignore-scripts`, the project's own install scripts then run as npm ci runs them.
 */
async function installDependencies(flags: string[], state: BuiltStage, ctx: StepContext): Promise<void> {
  const cwd = hostPath(state, '.');
  const omit = new Set<string>(state.env.NODE_ENV === 'production' ? ['dev'] : []);
  let ignoreScripts = false;
  for (const flag of flags) {
    const omitted = /^--omit=(dev|optional|peer)$/.exec(flag);
    if (omitted !== null) omit.add(omitted[1]);
    else if (flag === '--ignore-scripts') ignoreScripts = true;
    else throw new Error(`npm ci ${flag} is not stood in for`);
  }
  const repositoryLock = readFileSync(join(ctx.context, 'package-lock.json'), 'utf8');
  if (!existsSync(join(cwd, 'package.json')) || !existsSync(join(cwd, 'package-lock.json')))
    throw new Error('npm ci needs package.json and package-lock.json, which no COPY brought');
  if (readFileSync(join(cwd, 'package-lock.json'), 'utf8') !== repositoryLock)
    throw new Error(
      "the stage's package-lock.json is not the repository's, so the repository's node_modules cannot stand for it",
    );
  if (omit.size === 0) await copyTree([ctx.nodeModules], cwd);
  else await linkKeptPackages(JSON.parse(repositoryLock) as Lockfile, omit, ctx.nodeModules, join(cwd, 'node_modules'));
  if (ignoreScripts) return;
  const scripts =
    (JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  // Each script alone: `npm run X` would also run preX and postX, which come in their own turn here.
  for (const name of LIFECYCLE_OF_NPM_CI)
    if (scripts[name] !== undefined) await shell(`npm run ${name} --ignore-scripts`, cwd, state);
}

interface Lockfile {
  packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean; peer?: boolean }>;
}

/** npm's own rule (Arborist's Node#shouldOmit). */
function omitted(entry: Lockfile['packages'][string], omit: Set<string>): boolean {
  return Boolean(
    (entry.peer && omit.has('peer')) ||
      (entry.dev && omit.has('dev')) ||
      (entry.optional && omit.has('optional')) ||
      (entry.devOptional && omit.has('optional') && omit.has('dev')),
  );
}

async function linkKeptPackages(lock: Lockfile, omit: Set<string>, from: string, to: string): Promise<void> {
  const byParent = new Map<string, string[]>();
  for (const [key, entry] of Object.entries(lock.packages)) {
    // Top-level packages only: a nested node_modules comes along inside its package.
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || omitted(entry, omit)) continue;
    const name = key.slice('node_modules/'.length);
    if (!existsSync(join(from, name))) {
      // A platform package for another OS or CPU, which npm skips too.
      if (entry.optional) continue;
      throw new Error(`${name} is in the lockfile but not installed in ${from}: run npm ci`);
    }
    const parent = dirname(name) === '.' ? '' : dirname(name);
    byParent.set(parent, [...(byParent.get(parent) ?? []), join(from, name)]);
  }
  for (const [parent, packages] of byParent) {
    mkdirSync(join(to, parent), { recursive: true });
    // Hard links: a copy in a moment, without the repository's other packages reachable through a symlink's real path.
    await copyTree(packages, join(to, parent));
  }
}

async function copyTree(sources: string[], into: string): Promise<void> {
  for (const mode of ['-al', '-a']) {
    const child = spawn('cp', [mode, ...sources, into], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    if ((await new Promise<number | null>((resolve) => child.once('close', resolve))) === 0) return;
    // Hard links fail across filesystems: a plain copy then.
    if (mode === '-a') throw new Error(`cp ${mode} into ${into} failed: ${errors}`);
  }
}
