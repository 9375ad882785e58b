import { posix } from 'node:path';
import {
  formatCommandLine,
  invocationForms,
  quoteWord,
  type ScriptInvocation,
  splitCommandWords,
  type SplitWord,
} from './command-line.js';

/**
 * A skill's `allowed-tools` (https://agentskills.io/specification#allowed-tools-field: "a
 * space-delimited list of tools that are pre-approved to run", e.g. `Bash(git:*) Bash(jq:*) Read`),
 * parsed into rules and used as the *enforced* list of commands a skill's scripts may be run as.
 *
 * Grammar, as Claude Code writes it:
 * - entries are separated by whitespace or commas outside parentheses (Claude Code's own skills
 *   write `Read, Grep, Glob`); a YAML list of such strings is accepted too;
 * - an entry is `Tool` or `Tool(specifier)`; tool names are case-sensitive (`bash(...)` is not
 *   `Bash`, and is reported);
 * - for `Bash`, the specifier is a command line, compared word by word after shell-style quoting:
 *   - `Bash` and `Bash(*)` permit any command;
 *   - `Bash(python3:*)` or `Bash(python3 *)` permit any command whose first words are the given
 *     ones (`python3 …`, not `python3.11 …`);
 *   - `Bash(./scripts/echo.sh)` permits exactly that command line, with no arguments;
 *     `Bash(./scripts/echo.sh a)` exactly that argument;
 *   - any other `*` (`Bash(python3 scripts/*.py)`) is refused with a problem: a wildcard in the
 *     middle of a command would silently match arguments the author did not mean.
 *
 * A problem drops its entry (never widens a rule) and is reported for the skill's author.
 */

export type BashPattern = { kind: 'any' } | { kind: 'exact'; words: string[] } | { kind: 'prefix'; words: string[] };

export interface AllowedToolRule {
  /** The entry as written, e.g. `Bash(git:*)`. */
  raw: string;
  tool: string;
  /** The text in parentheses; null for a bare tool name. */
  specifier: string | null;
  /** For `Bash` rules: what the specifier permits. */
  bash?: BashPattern;
}

export interface ParsedAllowedTools {
  rules: AllowedToolRule[];
  problems: string[];
}

export type ScriptPermission = { allowed: true; matched: string } | { allowed: false; reason: string; needed: string };

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;
const BASH = 'Bash';
/** How many rules a refusal names before "and N more". */
const RULES_NAMED_IN_REASON = 5;

/** `value` is the frontmatter value as read: usually a string, possibly a YAML list, or absent. */
export function parseAllowedTools(value: unknown): ParsedAllowedTools {
  const result: ParsedAllowedTools = { rules: [], problems: [] };
  if (value === undefined || value === null) return result;
  const texts = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
  if (!texts) {
    result.problems.push(
      `allowed-tools must be a space-separated string such as 'Bash(python3:*) Read', not ${describeType(value)}`,
    );
    return result;
  }
  texts.forEach((text, index) => {
    if (typeof text !== 'string') {
      result.problems.push(
        `allowed-tools entry ${index + 1} must be a string such as 'Bash(python3:*)', not ` +
          `${describeType(text)}; it was ignored`,
      );
      return;
    }
    for (const entry of splitEntries(text, result.problems)) {
      const rule = parseEntry(entry, result.problems);
      if (rule) result.rules.push(rule);
    }
  });
  return result;
}

/**
 * Whether `rules` permit running the script. Both forms of the command line are tried
 * (`sh scripts/echo.sh a` and `./scripts/echo.sh a`), so `Bash(sh:*)` permits every `sh`
 * script while `Bash(./scripts/echo.sh:*)` permits that one script whatever its interpreter.
 * No rules means no permission: whether a skill without `allowed-tools` may run scripts at all
 * is the caller's policy, not this function's.
 */
export function checkScriptAllowed(rules: readonly AllowedToolRule[], invocation: ScriptInvocation): ScriptPermission {
  const forms = invocationForms(invocation);
  const interpreter = forms.viaInterpreter[0];
  for (const rule of rules) {
    if (rule.tool === BASH && rule.bash && permits(rule.bash, interpreter, invocation)) {
      return { allowed: true, matched: rule.raw };
    }
  }
  const needed = `Bash(${quoteWord(interpreter)}:*) or Bash(${quoteWord(forms.direct[0])}:*)`;
  const bashRules = rules.filter((rule) => rule.tool === BASH && rule.bash).map((rule) => rule.raw);
  const tried = `'${formatCommandLine(forms.viaInterpreter)}' or '${formatCommandLine(forms.direct)}'`;
  const reason =
    bashRules.length === 0
      ? `The skill's allowed-tools permit no Bash commands, so ${tried} may not run; add ` +
        `${needed} to its allowed-tools.`
      : `None of the skill's allowed-tools (${nameSome(bashRules)}) permit ${tried}; add ` +
        `${needed} to its allowed-tools.`;
  return { allowed: false, reason, needed };
}

function permits(pattern: BashPattern, interpreter: string, invocation: ScriptInvocation): boolean {
  if (pattern.kind === 'any') return true;
  const isScript = (word: string, direct: boolean) => sameScript(word, invocation.scriptPath, direct);
  const viaInterpreter: WordTest[] = [
    (w) => isInterpreter(w, interpreter),
    (w) => isScript(w, false),
    ...invocation.args.map(literal),
  ];
  const direct: WordTest[] = [(w) => isScript(w, true), ...invocation.args.map(literal)];
  return [viaInterpreter, direct].some((form) => matchesWords(pattern, form));
}

type WordTest = (patternWord: string) => boolean;

function literal(arg: string): WordTest {
  return (word) => word === arg;
}

function matchesWords(pattern: Exclude<BashPattern, { kind: 'any' }>, form: WordTest[]): boolean {
  if (pattern.kind === 'exact' ? pattern.words.length !== form.length : pattern.words.length > form.length)
    return false;
  return pattern.words.every((word, i) => form[i](word));
}

/** `python3`, `/usr/bin/python3` or `/bin/python3` all name the interpreter `python3`. */
function isInterpreter(word: string, interpreter: string): boolean {
  return word === interpreter || word === `/usr/bin/${interpreter}` || word === `/bin/${interpreter}`;
}

/**
 * `scripts/echo.sh`, `./scripts/echo.sh` and `scripts//echo.sh` are the same script. Run directly,
 * a shell needs a slash to take the word as a path (`echo.sh` alone would be looked up in PATH).
 */
function sameScript(word: string, scriptPath: string, direct: boolean): boolean {
  if (word.startsWith('/') || (direct && !word.includes('/'))) return false;
  return posix.normalize(word) === scriptPath;
}

/**
 * Entries separated by whitespace or commas outside parentheses (and outside quotes within them).
 * A broken entry is reported and skipped up to the next separator, so one typo costs one entry.
 */
function splitEntries(text: string, problems: string[]): string[] {
  const entries: string[] = [];
  let current = '';
  let depth = 0;
  let closed = false;
  let quote: string | undefined;
  const skipBroken = (i: number, why: string): number => {
    let end = i;
    while (end + 1 < text.length && !isSeparator(text[end + 1])) end++;
    problems.push(`allowed-tools entry '${current}${text.slice(i + 1, end + 1)}' ${why}; it was ignored`);
    current = '';
    depth = 0;
    closed = false;
    return end;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (depth === 0 && isSeparator(ch)) {
      if (current) entries.push(current);
      current = '';
      closed = false;
      continue;
    }
    current += ch;
    if (depth === 0) {
      if (closed)
        i = skipBroken(i, "has text after its closing ')'; write one entry per tool, e.g. 'Bash(git:*) Read'");
      else if (ch === '(') depth = 1;
      else if (ch === ')') i = skipBroken(i, "has a ')' without its '('");
    } else if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) current += text[++i];
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === '(') {
      depth++;
    } else if (ch === ')' && --depth === 0) {
      closed = true;
    }
  }
  if (depth > 0)
    problems.push(
      `allowed-tools entry '${current}' is missing its closing ` +
        `')'${quote ? ` (a ${quote} quote is open)` : ''}; it was ignored`,
    );
  else if (current) entries.push(current);
  return entries;
}

function isSeparator(ch: string): boolean {
  return ch === ',' || /\s/.test(ch);
}

function parseEntry(entry: string, problems: string[]): AllowedToolRule | undefined {
  const open = entry.indexOf('(');
  const tool = open < 0 ? entry : entry.slice(0, open);
  if (!TOOL_NAME.test(tool)) {
    problems.push(
      `allowed-tools entry '${entry}' does not start with a tool name such as Bash or Read; it was ignored`,
    );
    return undefined;
  }
  const specifier = open < 0 ? null : entry.slice(open + 1, -1);
  if (tool !== BASH && tool.toLowerCase() === BASH.toLowerCase()) {
    problems.push(
      `allowed-tools entry '${entry}' names the tool ` +
        `'${tool}', which is not 'Bash' (tool names are case-sensitive); it permits no commands`,
    );
  }
  if (tool !== BASH) return { raw: entry, tool, specifier };
  const bash = specifier === null ? ({ kind: 'any' } as const) : parseBashSpecifier(specifier, entry, problems);
  return bash && { raw: entry, tool, specifier, bash };
}

function parseBashSpecifier(specifier: string, entry: string, problems: string[]): BashPattern | undefined {
  const refuse = (why: string) => {
    problems.push(`allowed-tools entry '${entry}' ${why}; it was ignored`);
    return undefined;
  };
  const text = specifier.trim();
  if (text === '') return refuse("is empty; write 'Bash' for any command or e.g. 'Bash(python3:*)'");
  if (text === '*') return { kind: 'any' };
  const colonStar = text.endsWith(':*');
  const split = splitCommandWords(colonStar ? text.slice(0, -2) : text);
  if (!split.ok) return refuse(`has an ${split.problem}`);
  const words = split.words;
  const starSuffix = !colonStar && words.length > 1 && isLoneStar(words[words.length - 1]);
  const prefix = colonStar || starSuffix;
  const commandWords = starSuffix ? words.slice(0, -1) : words;
  if (commandWords.length === 0) return refuse("has no command before ':*'; write 'Bash(*)' for any command");
  if (commandWords.some((word) => word.unquotedStar)) {
    return refuse(
      "has a '*' inside the command; only a trailing ':*' (any arguments) is supported, e.g. 'Bash(python3 " +
        "scripts/extract.py:*)'",
    );
  }
  return { kind: prefix ? 'prefix' : 'exact', words: commandWords.map((word) => word.text) };
}

function isLoneStar(word: SplitWord): boolean {
  return word.unquotedStar && word.text === '*';
}

function nameSome(raws: string[]): string {
  const named = raws.slice(0, RULES_NAMED_IN_REASON).join(', ');
  return raws.length > RULES_NAMED_IN_REASON ? `${named} and ${raws.length - RULES_NAMED_IN_REASON} more` : named;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `the ${typeof value} ${JSON.stringify(value)}`;
}
