#!/usr/bin/env node
/**
 * Re-wraps the comment lines longer than the formatter's line width (120), which Biome leaves as
 * they are: `//` runs and `/* … *\/` blocks, at word boundaries, keeping each line's indentation
 * and comment prefix. A split line's remainder joins the next line of the same paragraph, or starts
 * a line of its own before a list item, a tag, a fence or the end of the comment. With --write, it
 * then splits the string, template and regex literals that keep a line too long into concatenated
 * pieces of the same value (tools/split-long-literals.mjs) and lets Biome lay them out, in rounds.
 * Then it lists what is still too long.
 *
 *   node tools/wrap-long-lines.mjs            (changes nothing; exit 1 if a comment needs re-wrapping)
 *   node tools/wrap-long-lines.mjs --strict   (exit 1 if any line at all is over 120: `npm run lint`)
 *   node tools/wrap-long-lines.mjs --write    (re-wraps comments, splits literals, lists what is left)
 *   node tools/wrap-long-lines.mjs --write --quiet src/a.ts …   (only those files; counts, not lines)
 *
 * Comments are found with the TypeScript parser, so text in strings and templates that looks like a
 * comment is never touched.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';
import { splitLongLiterals } from './split-long-literals.mjs';

const WIDTH = 120;
const FOLDERS = ['src', 'packages', 'test', 'bench', 'tools', 'migrations', 'web', 'examples', 'bin'];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
/** Lines that start one of these stay where they are: a remainder never joins them. */
const STARTS_OWN_LINE = /^(\s*$|[-*+>#|@]|\d+[.)]\s|```|\*\/)/;
/** Comments that are instructions to a tool, which must stay on one line. */
const DIRECTIVES = [
  /^\/\/\/?\s*(<reference|@ts-|biome-ignore|eslint|prettier-ignore|#region|#endregion)/,
  /^\/\*\s*(istanbul|c8|webpackChunkName)/,
];

const args = process.argv.slice(2);
const write = args.includes('--write');
const quiet = args.includes('--quiet');
const strict = args.includes('--strict');
const given = args.filter((arg) => !arg.startsWith('--'));
const files = given.length > 0 ? given : trackedSources();

let rewrapped = 0;
const left = {
  'comment without a space to break at': [],
  'comment after code': [],
  'string literal': [],
  'template literal': [],
  'regex literal': [],
  code: [],
};
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  if (!text.split('\n').some((line) => line.length > WIDTH)) continue;
  const wrapped = rewrapComments(file, text);
  if (wrapped !== text) {
    rewrapped++;
    if (write) writeFileSync(file, wrapped);
  }
  if (!write) classifyLongLines(file, text, left);
}
let split = 0;
if (write) {
  split = splitLiteralsAndFormat(files);
  for (const file of files) classifyLongLines(file, readFileSync(file, 'utf8'), left);
}

const verb = write ? 're-wrapped' : 'would re-wrap';
const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;
const splitNote = write ? `, split ${plural(split, 'literal')}` : '';
console.log(
  `wrap-long-lines: ${verb} comments in ${plural(rewrapped, 'file')}${splitNote}; lines still over ${WIDTH}:`,
);
let total = 0;
for (const [kind, lines] of Object.entries(left)) {
  total += lines.length;
  console.log(`  ${kind}: ${lines.length}`);
  if (!quiet) for (const line of lines) console.log(`    ${line}`);
}
const commentsLeft = left['comment without a space to break at'].length + left['comment after code'].length;
process.exitCode = (!write && rewrapped > 0) || commentsLeft > 0 || (strict && total > 0) ? 1 : 0;

function trackedSources() {
  const listed = execFileSync('git', ['ls-files', '--', ...FOLDERS], { encoding: 'utf8' }).split('\n');
  return listed.filter((file) => SOURCE.test(file) && !file.endsWith('.d.ts'));
}

/**
 * Splits the literals that keep lines over the width, then lets Biome lay the concatenations out; again
 * while lines are left that a split can shorten (a piece may land deeper than its literal was).
 */
function splitLiteralsAndFormat(files) {
  let count = 0;
  for (let round = 0; round < 6; round++) {
    const changed = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      if (!text.split('\n').some((line) => line.length > WIDTH)) continue;
      const wrapped = rewrapComments(file, text);
      const lines = wrapped.split('\n');
      const long = new Set(lines.flatMap((line, index) => (line.length > WIDTH ? [index] : [])));
      const result = splitLongLiterals(parse(file, wrapped), long, WIDTH);
      if (result.changed === 0 && wrapped === text) continue;
      writeFileSync(file, result.text);
      changed.push(file);
      count += result.changed;
    }
    if (changed.length === 0) break;
    execFileSync('node_modules/.bin/biome', ['format', '--write', ...changed], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return count;
}

function parse(file, text) {
  const kind = /\.[mc]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
}

/** Every comment in the file, in order, found around the parser's tokens (never inside a literal). */
function commentRanges(sourceFile) {
  const text = sourceFile.text;
  const byStart = new Map();
  const add = (ranges) => {
    for (const range of ranges ?? []) byStart.set(range.pos, range);
  };
  const visit = (node) => {
    for (const child of node.getChildren(sourceFile)) {
      add(ts.getLeadingCommentRanges(text, child.pos));
      add(ts.getTrailingCommentRanges(text, child.end));
      visit(child);
    }
  };
  add(ts.getLeadingCommentRanges(text, 0));
  visit(sourceFile);
  return [...byStart.values()].sort((a, b) => a.pos - b.pos);
}

function lineStartOf(text, pos) {
  return text.lastIndexOf('\n', pos - 1) + 1;
}

/** The comments that stand alone on their lines, `//` runs grouped: {start, end, indent, lines}. */
function commentBlocks(text, ranges) {
  const blocks = [];
  for (const range of ranges) {
    const start = lineStartOf(text, range.pos);
    const indent = text.slice(start, range.pos);
    if (!/^[ \t]*$/.test(indent)) continue;
    const comment = text.slice(range.pos, range.end);
    if (DIRECTIVES.some((directive) => directive.test(comment))) continue;
    const previous = blocks.at(-1);
    const single = range.kind === ts.SyntaxKind.SingleLineCommentTrivia;
    if (single && previous?.single && previous.indent === indent && text.slice(previous.end, start) === '\n') {
      previous.end = range.end;
      previous.lines.push(comment);
    } else {
      blocks.push({ start, end: range.end, indent, single, lines: comment.split('\n') });
    }
  }
  return blocks;
}

function rewrapComments(file, text) {
  const blocks = commentBlocks(text, commentRanges(parse(file, text)));
  let out = text;
  for (const block of blocks.reverse()) {
    const original = out.slice(block.start, block.end);
    const lines = block.single ? slashLines(block) : starLines(block);
    if (lines === undefined || !original.split('\n').some((line) => line.length > WIDTH)) continue;
    const wrapped = reflow(lines, block.indent.length).map((line) =>
      `${block.indent}${line.prefix}${line.text}`.trimEnd(),
    );
    const replacement = wrapped.join('\n');
    if (replacement !== original) out = out.slice(0, block.start) + replacement + out.slice(block.end);
  }
  return out;
}

/** `// text` lines as prefix and text. */
function slashLines(block) {
  return block.lines.map((line) => {
    const match = /^(\/\/+ ?)(.*)$/.exec(line);
    return { prefix: match[1], text: match[2], continuation: match[1] };
  });
}

/** A `/** … *\/` or `/* … *\/` block as prefix and text: a one-line block opens into a multi-line one. */
function starLines(block) {
  const [first, ...rest] = block.lines;
  if (rest.length === 0) {
    const match = /^(\/\*\*?)\s?(.*?)\s*\*\/$/.exec(first);
    if (match === null) return undefined;
    return [
      { prefix: match[1], text: '', continuation: ' * ' },
      { prefix: ' * ', text: match[2], continuation: ' * ' },
      { prefix: ' */', text: '', continuation: ' * ' },
    ];
  }
  const opening = /^(\/\*\*?\s?)(.*)$/.exec(first);
  const lines = [{ prefix: opening[1], text: opening[2], continuation: ' * ' }];
  for (const line of rest) {
    const body = line.slice(block.indent.length);
    if (/^\s*\*\/$/.test(body)) {
      lines.push({ prefix: body, text: '', continuation: ' * ' });
      continue;
    }
    const match = /^(\s*\*(?!\/) ?)(.*)$/.exec(body);
    if (match === null) return undefined;
    lines.push({ prefix: match[1], text: match[2], continuation: match[1].endsWith(' ') ? match[1] : `${match[1]} ` });
  }
  return lines;
}

/** Splits each too-long line at its last space that fits; the remainder joins the next line of the paragraph. */
function reflow(input, indentWidth) {
  const lines = input.map((line) => ({ ...line }));
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line.text)) fence = !fence;
    const budget = WIDTH - indentWidth - line.prefix.length;
    if (fence || line.text.length <= budget) continue;
    const cut = line.text.lastIndexOf(' ', budget);
    const leading = /^\s*/.exec(line.text)[0].length;
    if (cut <= leading) continue;
    const head = line.text.slice(0, cut).trimEnd();
    const rest = line.text.slice(cut + 1).trimStart();
    const listItem = /^\s*([-*+]|\d+[.)])\s/.exec(line.text);
    const hanging = ' '.repeat(leading + (listItem ? listItem[0].length - leading : 0));
    line.text = head;
    const next = lines[i + 1];
    const joins =
      next !== undefined &&
      next.prefix === line.continuation &&
      !STARTS_OWN_LINE.test(next.text) &&
      /^\s*/.exec(next.text)[0] === hanging;
    if (joins) next.text = `${hanging}${rest} ${next.text.trimStart()}`;
    else
      lines.splice(i + 1, 0, { prefix: line.continuation, text: `${hanging}${rest}`, continuation: line.continuation });
  }
  return lines;
}

/** Files each line still over the width under what makes it long. */
function classifyLongLines(file, text, found) {
  const lines = text.split('\n');
  const long = new Set(lines.flatMap((line, index) => (line.length > WIDTH ? [index] : [])));
  if (long.size === 0) return;
  const sourceFile = parse(file, text);
  const kinds = new Map();
  const mark = (start, end, kind) => {
    const from = sourceFile.getLineAndCharacterOfPosition(start).line;
    const to = sourceFile.getLineAndCharacterOfPosition(end).line;
    for (let line = from; line <= to; line++) if (long.has(line) && !kinds.has(line)) kinds.set(line, kind);
  };
  for (const range of commentRanges(sourceFile)) {
    const standsAlone = /^[ \t]*$/.test(text.slice(lineStartOf(text, range.pos), range.pos));
    mark(range.pos, range.end, standsAlone ? 'comment without a space to break at' : 'comment after code');
  }
  const visit = (node) => {
    if (ts.isStringLiteral(node)) mark(node.getStart(sourceFile), node.end, 'string literal');
    else if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node))
      mark(node.getStart(sourceFile), node.end, 'template literal');
    else if (ts.isRegularExpressionLiteral(node)) mark(node.getStart(sourceFile), node.end, 'regex literal');
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  for (const index of long) found[kinds.get(index) ?? 'code'].push(`${file}:${index + 1} (${lines[index].length})`);
}
