#!/usr/bin/env node
/**
 * Lists the functions and methods longer than a number of lines in the given folders or files, and
 * exits with 1 when there is any: a function past ~60 lines does several steps, which want names
 * (see the house style).
 *
 *   node tools/long-functions.mjs --max 60 src/skills src/scripts
 *   node tools/long-functions.mjs --max 60 --exclude '/store/' --exclude '\.service\.ts$' src/skills
 *
 * A function's lines run from its first token (its doc comment left out) to its closing brace; a
 * nested function counts on its own too. Test files (*.spec.ts, *-spec.ts) and declaration files
 * are skipped: a `describe` block is not a function with steps.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The TypeScript compiler, loaded once the arguments are read (it takes a second or two). */
let ts;

const USAGE = `usage: node tools/long-functions.mjs [--max N] [--exclude REGEX]... PATH...
  --max N          longest allowed function, in lines (default 60)
  --exclude REGEX  skip files whose path (as listed) matches; may be repeated
Exits with 1 when a function is longer than N lines, 2 on a usage error.`;

const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const SKIPPED = /(\.d\.(ts|mts|cts)|[.-]spec\.(ts|tsx|mts|js|mjs))$/;

function parseArguments(argv) {
  const options = { max: 60, exclude: [], paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--help' || argument === '-h') return { help: true };
    if (argument === '--max' || argument === '--exclude') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${argument} needs a value`);
      if (argument === '--exclude') options.exclude.push(new RegExp(value));
      else if (!/^\d+$/.test(value)) throw new Error(`--max wants a whole number of lines, not "${value}"`);
      else options.max = Number(value);
    } else if (argument.startsWith('-')) throw new Error(`unknown option ${argument}`);
    else options.paths.push(argument);
  }
  if (options.paths.length === 0) throw new Error('name at least one folder or file');
  return options;
}

/** The source files under a path, in a stable order. */
function sourceFiles(path) {
  const stat = statSync(path);
  if (stat.isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules' && !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) =>
      entry.isDirectory()
        ? sourceFiles(join(path, entry.name))
        : entry.isFile() && SOURCE.test(entry.name) && !SKIPPED.test(entry.name)
          ? [join(path, entry.name)]
          : [],
    );
}

/**
 * A readable name for a function node: `Class.method`, the variable or property it is assigned to, or `<anonymous>`.
 */
function nameOf(node) {
  const own = node.name && ts.isIdentifier(node.name) ? node.name.text : node.name?.getText();
  const className = ts.isClassLike(node.parent) ? (node.parent.name?.text ?? '<class>') : undefined;
  if (ts.isConstructorDeclaration(node)) return `${className}.constructor`;
  if (own !== undefined) return className !== undefined ? `${className}.${own}` : own;
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
    parent.name
  ) {
    return ts.isPropertyDeclaration(parent) && ts.isClassLike(parent.parent)
      ? `${parent.parent.name?.text ?? '<class>'}.${parent.name.getText()}`
      : parent.name.getText();
  }
  return '<anonymous>';
}

function isFunction(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

/** Every function of a file with its length in lines. */
function functionsOf(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (isFunction(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file, line: first + 1, name: nameOf(node), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

async function main(argv) {
  let options;
  try {
    options = parseArguments(argv);
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  ts = (await import('typescript')).default;
  const files = options.paths
    .flatMap(sourceFiles)
    .filter((file) => !options.exclude.some((pattern) => pattern.test(file)));
  const long = files
    .flatMap(functionsOf)
    .filter((fn) => fn.lines > options.max)
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  for (const fn of long) process.stdout.write(`${relative('.', fn.file)}:${fn.line}  ${fn.name}  ${fn.lines} lines\n`);
  if (long.length > 0)
    process.stderr.write(
      `${long.length} function${long.length === 1 ? '' : 's'} over ${options.max} lines in ` +
        `${files.length} files: split each into named steps.\n`,
    );
  return long.length > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
