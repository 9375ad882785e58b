import { closeSync, fstatSync, lstatSync, openSync, realpathSync } from 'node:fs';
import { describeSpecialFile, OPEN_FLAGS, openProblem } from './skill-folder.reader.js';

/** The file beside SKILL.md that makes a skill in a code directory a code skill. */
export const CODE_MODULE_FILE = 'skill.mjs';

export type CodeModuleInspection =
  | { kind: 'none' }
  | { kind: 'module'; module: string }
  /** A `skill.mjs` is there but cannot be the skill's code: the skill is reported invalid. */
  | { kind: 'invalid'; problem: string };

/**
 * Looks for `skill.mjs` in a skill folder of a code directory, opened as SKILL.md is (non-blocking,
 * then fstat on the descriptor), so a FIFO or a device named skill.mjs is reported instead of hanging
 * a scan or, later, the worker that would import it. The module is named by its real path.
 */
export function inspectCodeModule(folder: string): CodeModuleInspection {
  const file = `${folder}/${CODE_MODULE_FILE}`;
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    return openFailure(file, error as NodeJS.ErrnoException);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) {
      const what = info.isDirectory() ? 'a folder' : describeSpecialFile(info);
      return {
        kind: 'invalid',
        problem:
          `${CODE_MODULE_FILE} is ` +
          `${what}, not a regular file; replace it with a JavaScript module exporting execute(ctx)`,
      };
    }
  } catch (error) {
    return {
      kind: 'invalid',
      problem:
        `${CODE_MODULE_FILE} cannot be read ` +
        `(${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    };
  } finally {
    closeSync(fd);
  }
  try {
    return { kind: 'module', module: realpathSync.native(file) };
  } catch (error) {
    return {
      kind: 'invalid',
      problem:
        `${CODE_MODULE_FILE} cannot be resolved ` +
        `(${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    };
  }
}

function openFailure(file: string, error: NodeJS.ErrnoException): CodeModuleInspection {
  const problem = openProblem(CODE_MODULE_FILE, error);
  if (problem !== undefined) return { kind: 'invalid', problem };
  // Absent is fine (an instruction skill); a link to nothing is a mistake worth reporting.
  if (error.code === 'ENOENT' && isSymlink(file)) {
    return {
      kind: 'invalid',
      problem:
        `${CODE_MODULE_FILE} is a symbolic link to a file that does not exist; point it at the module or ` +
        `remove it`,
    };
  }
  return { kind: 'none' };
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
