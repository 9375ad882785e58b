import { accessSync, constants, realpathSync } from 'node:fs';

/**
 * Which program runs a skill's script. The sandbox never executes the script file itself (a skill
 * folder may hold anything, including native binaries); it runs one of a few interpreters from the
 * host's system folders and hands it the script. The shebang, when there is one, says which;
 * otherwise the extension does. The script's own execute bit does not matter.
 */

export const INTERPRETERS = ['sh', 'bash', 'python3', 'node'] as const;
export type InterpreterName = (typeof INTERPRETERS)[number];

const BY_EXTENSION: Readonly<Record<string, InterpreterName>> = {
  '.sh': 'sh',
  '.bash': 'bash',
  '.py': 'python3',
  '.js': 'node',
  '.mjs': 'node',
  '.cjs': 'node',
};

/**
 * Where interpreters are looked up, in the order of the sandbox's PATH; all are bound read-only
 * into the sandbox. `/usr/local/bin` is where the official Node.js images keep `node`.
 */
export const INTERPRETER_DIRS = ['/usr/local/bin', '/usr/bin', '/bin'] as const;

/** A program is only of use when it really lives in a folder the sandbox binds (not a link to /opt or a home). */
const BOUND_PROGRAM_ROOTS = ['/usr/', '/bin/'] as const;

/** Linux reads at most this many bytes of a shebang line (BINPRM_BUF_SIZE); so do we. */
export const SHEBANG_BYTES = 256;
const MAX_SHEBANG_OPTIONS = 8;

export interface Interpreter {
  name: InterpreterName;
  /** Absolute path of the program, e.g. `/usr/bin/python3`. */
  command: string;
  /** Options from the shebang, e.g. `['-e']` for `#!/bin/sh -e`; the script and its arguments follow. */
  args: string[];
}

/**
 * The interpreter, or why the file cannot be run: a clause ("its shebang names …; use …") to follow "Script 'x' cannot
 * be run: ".
 */
export type InterpreterChoice = Interpreter | { error: string };

export type Shebang =
  | { kind: 'none' }
  | { kind: 'interpreter'; program: string; options: string[] }
  | { kind: 'invalid'; reason: string };

/** Whether an absolute path names an executable file; injectable so the choice is tested without a disk. */
export type IsExecutable = (absolutePath: string) => boolean;

export const isExecutableFile: IsExecutable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** An executable file that is really inside the folders the sandbox binds, so it runs in there too. */
export const isSandboxProgram: IsExecutable = (path) => {
  if (!isExecutableFile(path)) return false;
  try {
    const real = realpathSync(path);
    return BOUND_PROGRAM_ROOTS.some((root) => real.startsWith(root));
  } catch {
    return false;
  }
};

/** Where `name` is, the first of INTERPRETER_DIRS that has it as a program the sandbox can run; undefined when none. */
export function findSandboxProgram(name: string, isExecutable: IsExecutable = isSandboxProgram): string | undefined {
  return INTERPRETER_DIRS.map((dir) => `${dir}/${name}`).find(isExecutable);
}

/** `/usr/local/bin, /usr/bin and /bin`, for messages. */
export function interpreterDirsText(): string {
  return `${INTERPRETER_DIRS.slice(0, -1).join(', ')} and ${INTERPRETER_DIRS.at(-1)}`;
}

/**
 * `relativePath` is the script's path in the skill folder (for its extension);
 * `firstBytes` its first bytes (at least the first line, up to SHEBANG_BYTES).
 */
export function chooseInterpreter(
  relativePath: string,
  firstBytes: Buffer,
  isExecutable: IsExecutable = isSandboxProgram,
): InterpreterChoice {
  const shebang = parseShebang(firstBytes);
  if (shebang.kind === 'invalid') return { error: shebang.reason };
  let name: InterpreterName;
  let options: string[] = [];
  if (shebang.kind === 'interpreter') {
    const program = shebang.program.slice(shebang.program.lastIndexOf('/') + 1);
    if (!isInterpreterName(program)) {
      return {
        error:
          `its shebang names '${shebang.program}', which is not an allowed interpreter; use one of ` +
          `${INTERPRETERS.join(', ')} (e.g. '#!/usr/bin/env python3').`,
      };
    }
    name = program;
    options = shebang.options;
  } else {
    const extension = extensionOf(relativePath);
    const byExtension = BY_EXTENSION[extension.toLowerCase()];
    if (!byExtension) {
      const known = Object.keys(BY_EXTENSION).join(', ');
      const what = extension ? `its extension '${extension}' is not one of ${known}` : `it has no extension (${known})`;
      return {
        error: `it has no shebang and ${what}; add a first line such as '#!/usr/bin/env python3' or '#!/bin/sh'.`,
      };
    }
    name = byExtension;
  }
  const command = findSandboxProgram(name, isExecutable);
  if (!command) {
    return {
      error:
        `it needs ${name}, which is not installed on this server (looked in ` +
        `${interpreterDirsText()}); ask the operator to install it.`,
    };
  }
  return { name, command, args: options };
}

/**
 * The first line of a file as a shebang. `#!/usr/bin/env python3` and `#!/usr/bin/env -S node
 * --flag` name the program after `env`; options are split on whitespace (as `env -S` does; Linux
 * itself would pass them as one word) and must look like options, so a shebang cannot smuggle in
 * a second script. A UTF-8 byte order mark and a CRLF line end are tolerated.
 */
export function parseShebang(firstBytes: Buffer): Shebang {
  let head = firstBytes.subarray(0, SHEBANG_BYTES + 3);
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) head = head.subarray(3);
  if (head[0] !== 0x23 || head[1] !== 0x21) return { kind: 'none' };
  const newline = head.indexOf(0x0a);
  if (newline < 0 && head.length >= SHEBANG_BYTES)
    return { kind: 'invalid', reason: `its shebang line is longer than ${SHEBANG_BYTES} bytes.` };
  const line = head
    .subarray(2, newline < 0 ? head.length : newline)
    .toString('utf8')
    .replace(/\r$/, '');
  if (line.includes('\0')) return { kind: 'invalid', reason: 'its shebang line holds a NUL byte.' };
  let words = line.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0)
    return { kind: 'invalid', reason: "its shebang '#!' names no program; write e.g. '#!/bin/sh'." };
  if (!words[0].startsWith('/'))
    return {
      kind: 'invalid',
      reason:
        `its shebang names '${words[0]}', which is not an absolute path; write e.g. '#!/usr/bin/env ` + `${words[0]}'.`,
    };
  if (words[0].endsWith('/env')) {
    words = words.slice(words[1] === '-S' ? 2 : 1);
    if (words.length === 0)
      return {
        kind: 'invalid',
        reason: "its shebang runs env without a program; write e.g. '#!/usr/bin/env python3'.",
      };
    if (words[0].startsWith('-'))
      return {
        kind: 'invalid',
        reason: `its shebang passes '${words[0]}' to env; only '-S' is supported, e.g. '#!/usr/bin/env -S python3 -u'.`,
      };
  }
  const [program, ...options] = words;
  if (options.length > MAX_SHEBANG_OPTIONS)
    return { kind: 'invalid', reason: `its shebang has more than ${MAX_SHEBANG_OPTIONS} options.` };
  const notOption = options.find((option) => !option.startsWith('-'));
  if (notOption !== undefined) {
    return {
      kind: 'invalid',
      reason:
        `its shebang passes '${notOption}' to ` +
        `${program}; only options starting with '-' may follow the interpreter.`,
    };
  }
  return { kind: 'interpreter', program, options };
}

function isInterpreterName(name: string): name is InterpreterName {
  return (INTERPRETERS as readonly string[]).includes(name);
}

function extensionOf(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : '';
}
