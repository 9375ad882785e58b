/**
 * Splits the string and template literals that make a line longer than the line width into a
 * concatenation of pieces, for the formatter to lay out over lines: `'part one ' + 'part two'`, and
 * `` `a ${x} ` + `b ${y}` ``. The value never changes: a string is cut between its escape sequences
 * and surrogate pairs (at a space where it can, the space ending the piece before the cut), a
 * template between its text chunks (never inside `${…}`). A regex literal becomes
 * `new RegExp('…' + '…', flags)` with the same source.
 *
 * A literal stays whole where a literal is required or where its literal type may matter: types,
 * enum members, module names (`import`, `export`, `require`, `jest.mock`), property names and keys,
 * `case` labels, directives (`'use strict'`), tagged templates (the tag sees the pieces), JSX
 * attributes and `as const` values.
 *
 * Used by tools/wrap-long-lines.mjs, which formats with Biome after each round.
 */
import ts from 'typescript';

/**
 * The text with the literals that overlap a line of `long` (line indexes) split; `width` is the
 * line width. Each long line gets its longest splittable literal split.
 */
export function splitLongLiterals(sourceFile, long, width) {
  const text = sourceFile.text;
  const lineOf = (pos) => sourceFile.getLineAndCharacterOfPosition(pos).line;
  const chosen = new Map();
  const visit = (node) => {
    const kind = literalKind(node);
    if (kind !== undefined) {
      const start = node.getStart(sourceFile);
      const from = lineOf(start);
      const to = lineOf(node.end);
      const lines = [];
      for (let line = from; line <= to; line++) if (long.has(line)) lines.push(line);
      const mode = lines.length > 0 ? splittable(node) : false;
      if (mode !== false) {
        const lineStart = text.lastIndexOf('\n', start - 1) + 1;
        const indent = /^[ \t]*/.exec(text.slice(lineStart))[0].length;
        const replacement = splitLiteral(node, kind, text, start, indent, width, mode === 'open');
        if (replacement !== undefined) {
          const edit = { start, end: node.end, replacement };
          for (const line of lines) {
            const current = chosen.get(line);
            if (current === undefined || current.end - current.start < edit.end - edit.start) chosen.set(line, edit);
          }
          return;
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  const edits = [...new Set(chosen.values())].sort((a, b) => b.start - a.start);
  let out = text;
  for (const edit of edits) out = out.slice(0, edit.start) + edit.replacement + out.slice(edit.end);
  return { text: out, changed: edits.length };
}

function literalKind(node) {
  if (ts.isStringLiteral(node)) return 'string';
  if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) return 'template';
  if (ts.isRegularExpressionLiteral(node)) return 'regex';
  return undefined;
}

/**
 * Whether a literal here is an expression whose pieces may be concatenated without changing anything:
 * true; false; or 'open' in an `as const` value, whose literal type a concatenation would widen to
 * string: there only a template's `${…}` is opened over lines, which keeps its type.
 */
function splittable(node) {
  const parent = node.parent;
  if (parent === undefined) return false;
  for (let up = parent; up !== undefined; up = up.parent) {
    if (ts.isTypeNode(up) && !ts.isExpressionWithTypeArguments(up)) return false;
    if (ts.isAsExpression(up) && isConstType(up.type)) return ts.isTemplateExpression(node) ? 'open' : false;
    if (ts.isStatement(up) || ts.isFunctionLike(up) || ts.isClassLike(up)) break;
  }
  if (ts.isTaggedTemplateExpression(parent)) return false;
  if (ts.isEnumMember(parent) || ts.isCaseClause(parent) || ts.isExpressionStatement(parent)) return false;
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isExternalModuleReference(parent))
    return false;
  if (ts.isImportAttribute?.(parent) || ts.isModuleDeclaration(parent) || ts.isLiteralTypeNode(parent)) return false;
  if (ts.isJsxAttribute(parent) || ts.isComputedPropertyName(parent)) return false;
  if (ts.isElementAccessExpression(parent) && parent.argumentExpression === node) return false;
  if ('name' in parent && parent.name === node) return false;
  if ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.expression !== node) {
    const callee = parent.expression;
    if (callee.kind === ts.SyntaxKind.ImportKeyword) return false;
    const name = callee.getText();
    if (name === 'require' || /^(jest|require)\./.test(name) || name === 'import.meta.resolve') return false;
  }
  return true;
}

function isConstType(type) {
  return ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === 'const';
}

/** Whether the pieces of a concatenation put where `node` is need parentheses to stay one operand. */
function needsParentheses(node) {
  const parent = node.parent;
  if (ts.isBinaryExpression(parent)) {
    const op = parent.operatorToken.kind;
    if (op === ts.SyntaxKind.PlusToken) return false;
    const higher = [
      ts.SyntaxKind.MinusToken,
      ts.SyntaxKind.AsteriskToken,
      ts.SyntaxKind.SlashToken,
      ts.SyntaxKind.PercentToken,
      ts.SyntaxKind.AsteriskAsteriskToken,
    ];
    return higher.includes(op);
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) return parent.expression === node;
  return !(
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent) ||
    ts.isParameter(parent) ||
    ts.isBindingElement(parent) ||
    ts.isArrayLiteralExpression(parent) ||
    ts.isReturnStatement(parent) ||
    ts.isThrowStatement(parent) ||
    ts.isArrowFunction(parent) ||
    ts.isConditionalExpression(parent) ||
    ts.isParenthesizedExpression(parent) ||
    ts.isTemplateSpan(parent) ||
    ts.isSpreadElement(parent) ||
    ts.isShorthandPropertyAssignment(parent) ||
    ts.isExportAssignment(parent) ||
    ts.isDecorator(parent) ||
    ts.isYieldExpression(parent) ||
    ts.isJsxExpression(parent)
  );
}

/**
 * The source text's indivisible units between the delimiters: escape sequences, surrogate pairs,
 * `${…}` substitutions (given as [start, end) ranges of the body) and single characters.
 */
function units(body, substitutions = []) {
  const out = [];
  let i = 0;
  let next = 0;
  while (i < body.length) {
    const substitution = substitutions[next];
    if (substitution !== undefined && substitution[0] === i) {
      out.push({ text: body.slice(substitution[0], substitution[1]), substitution: true });
      i = substitution[1];
      next++;
      continue;
    }
    let end = i + 1;
    const char = body[i];
    if (char === '\\') end = escapeEnd(body, i);
    else if (isHighSurrogate(body.charCodeAt(i)) && i + 1 < body.length) end = i + 2;
    out.push({ text: body.slice(i, end) });
    i = end;
  }
  return out;
}

function isHighSurrogate(code) {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Where the escape sequence starting at `i` (a backslash) ends; generous: it never cuts one short. */
function escapeEnd(body, i) {
  const next = body[i + 1];
  if (next === undefined) return i + 1;
  if (next === 'x') return Math.min(body.length, i + 4);
  if (next === 'u') {
    if (body[i + 2] === '{') {
      const close = body.indexOf('}', i + 3);
      return close === -1 ? body.length : close + 1;
    }
    return Math.min(body.length, i + 6);
  }
  if (/[0-7]/.test(next)) {
    let end = i + 2;
    while (end < i + 4 && /[0-7]/.test(body[end] ?? '')) end++;
    return end;
  }
  if (next === '\r' && body[i + 2] === '\n') return i + 3;
  if (isHighSurrogate(body.charCodeAt(i + 1))) return i + 3;
  return i + 2;
}

/**
 * Groups the units into pieces whose lines fit: `first` is the column the first piece's text starts at
 * (after its opening delimiter), `room` the last column a line may reach before the closing delimiter
 * and ` +`. A piece ends after a space where it can, else after a punctuation mark, else anywhere.
 * With `balanced` (a template with `${…}`), a piece ends only where it and the rest both keep a `${…}`,
 * since Biome's useTemplate rule asks to merge a concatenation that mixes plain pieces with templates.
 */
function pieces(list, first, room, balanced) {
  const substitutionsFrom = new Array(list.length + 1).fill(false);
  for (let i = list.length - 1; i >= 0; i--) substitutionsFrom[i] = substitutionsFrom[i + 1] || !!list[i].substitution;
  const result = [];
  let start = 0;
  let column = first;
  for (let i = 0; i < list.length; i++) {
    const unit = list[i];
    const newline = !unit.substitution && unit.text === '\n';
    if (!newline && column + unit.text.length > room && i > start) {
      const fits = (at) => !balanced || (hasSubstitution(list, start, at) && substitutionsFrom[at]);
      const at = lastBreak(list, start, i, ' ', fits) ?? lastBreak(list, start, i, 'mark', fits) ?? (balanced ? -1 : i);
      if (at > start) {
        result.push(list.slice(start, at));
        start = at;
        column = first;
        for (let j = start; j < i; j++) column = list[j].text === '\n' ? 0 : column + list[j].text.length;
      }
    }
    column = newline ? 0 : column + unit.text.length;
  }
  if (start < list.length) result.push(list.slice(start));
  return result;
}

/** The last place in (from, to] right after a space (or a punctuation mark) where `fits` allows a cut. */
function lastBreak(list, from, to, kind, fits) {
  for (let at = to; at > from; at--) {
    const unit = list[at - 1];
    if (unit.substitution) continue;
    const found = kind === ' ' ? unit.text === ' ' : /^[,;:/|&)\]}-]$/.test(unit.text);
    if (found && fits(at)) return at;
  }
  return undefined;
}

function hasSubstitution(list, from, to) {
  for (let i = from; i < to; i++) if (list[i].substitution) return true;
  return false;
}
/**
 * The replacement text for one literal, or undefined when there is nothing to gain. The pieces are cut
 * for the literal's own line, indented a step (where Biome puts the pieces of a broken concatenation);
 * a literal that fits there but not where it stands (`it('…', async () => {`) is cut for where it stands.
 */
function splitLiteral(node, kind, text, start, indent, width, openOnly) {
  const raw = text.slice(start, node.end);
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = text.indexOf('\n', node.end);
  const after = text.slice(node.end, lineEnd === -1 ? text.length : lineEnd).length;
  const layouts = [
    { first: indent + 4 + 1, room: width - 4 },
    { first: start - lineStart + 1, room: width - after - 3 },
  ];
  const cut = (list, balanced, offset = 0) => {
    for (const { first, room } of layouts) {
      const split = pieces(list, first + offset, room, balanced);
      if (split.length > 1) return split;
    }
    return [list];
  };
  const join = (piece) => piece.map((unit) => unit.text).join('');
  let parts;
  if (kind === 'string') {
    const quote = raw[0];
    const split = cut(units(raw.slice(1, -1)), false);
    if (split.length < 2) return undefined;
    parts = split.map((piece) => `${quote}${join(piece)}${quote}`);
  } else if (kind === 'template') {
    const body = raw.slice(1, -1);
    const substitutions = [];
    if (ts.isTemplateExpression(node)) {
      let previous = node.head;
      for (const span of node.templateSpans) {
        substitutions.push([previous.end - 2 - start - 1, span.literal.getStart() + 1 - start - 1]);
        previous = span.literal;
      }
    }
    const all = units(body, substitutions);
    // A `${…}` too long for a line is opened: after a line break there, Biome lays its code out.
    const open = (split, always = false) => {
      let opened = false;
      for (const piece of split) {
        if (!always && pieceWidth(piece, layouts[0].first) <= layouts[0].room) continue;
        for (const unit of piece) {
          if (!unit.substitution || unit.text.includes('\n') || unit.text.length < 30) continue;
          unit.text = `\${\n${unit.text.slice(2)}`;
          opened = true;
        }
      }
      return opened;
    };
    const fresh = () => all.map((unit) => ({ ...unit }));
    let split = openOnly ? [fresh()] : cut(fresh(), substitutions.length > 0);
    let opened = open(split);
    // No cut keeps a `${…}` on each side: opening one lets Biome break the line there instead.
    if (split.length < 2 && !opened) opened = open(split, true);
    if (!openOnly && split.length < 2 && !opened && substitutions.length > 0) {
      split = cut(fresh(), false);
      opened = open(split);
    }
    if (split.length < 2 && !opened) return undefined;
    parts = split.map((piece) => `\`${join(piece)}\``);
  } else {
    const close = raw.lastIndexOf('/');
    const flags = raw.slice(close + 1);
    const source = raw.slice(1, close);
    const string = units(source).map((unit) => ({ text: unit.text.replace(/[\\']/g, (char) => `\\${char}`) }));
    const split = cut(string, false, 'new RegExp('.length);
    if (split.length < 2) return undefined;
    const concatenation = split.map((piece) => `'${join(piece)}'`).join(' + ');
    return `new RegExp(${concatenation}${flags === '' ? '' : `, '${flags}'`})`;
  }
  const concatenation = parts.join(' + ');
  return needsParentheses(node) ? `(${concatenation})` : concatenation;
}

/** The widest line of a piece whose text starts at column `first`. */
function pieceWidth(piece, first) {
  let widest = 0;
  let column = first;
  for (const unit of piece) {
    if (unit.text === '\n') column = 0;
    else column += unit.text.length;
    widest = Math.max(widest, column);
  }
  return widest;
}
