/**
 * Command lines as words. A script never runs through a shell (the sandbox gets an argv), so a
 * command line is only ever *text for people and rules*: the card shows one, and `allowed-tools`
 * patterns are written as one. Both directions live here so they agree: `formatCommandLine` quotes
 * the way `splitCommandWords` reads, and `split(format(words))` gives back `words`.
 */

/** A script run as the sandbox runs it: `interpreter scriptPath ...args`. */
export interface ScriptInvocation {
  /** The interpreter's name (`sh`, `python3`, ...); a path is reduced to its last segment. */
  interpreter: string;
  /** Relative to the skill folder, normalised, e.g. `scripts/echo.sh`. */
  scriptPath: string;
  args: readonly string[];
}

/**
 * The two ways a person would write the same run, both checked against `allowed-tools`:
 * `sh scripts/echo.sh a` (the interpreter named) and `./scripts/echo.sh a` (run through its
 * shebang). The first is also what the card shows.
 */
export function invocationForms(invocation: ScriptInvocation): { viaInterpreter: string[]; direct: string[] } {
  const interpreter = invocation.interpreter.slice(invocation.interpreter.lastIndexOf('/') + 1);
  // `sh -x.sh` would read as an option: a path starting with '-' keeps its './'.
  const script = invocation.scriptPath.startsWith('-') ? `./${invocation.scriptPath}` : invocation.scriptPath;
  return {
    viaInterpreter: [interpreter, script, ...invocation.args],
    direct: [`./${invocation.scriptPath}`, ...invocation.args],
  };
}

const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word as a POSIX shell would need it: bare when safe, otherwise in single quotes. */
export function quoteWord(word: string): string {
  if (PLAIN_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export function formatCommandLine(words: readonly string[]): string {
  return words.map(quoteWord).join(' ');
}

export interface SplitWord {
  text: string;
  /** True when the word holds a `*` outside quotes: a wildcard to the rule parser. */
  unquotedStar: boolean;
}

export type SplitResult = { ok: true; words: SplitWord[] } | { ok: false; problem: string };

/**
 * Splits a command line into words the way a POSIX shell quotes (single quotes literal, double
 * quotes with `\"` `\\` `\$` `` \` `` escapes, backslash outside quotes) without expanding anything:
 * `$(whoami)` stays those characters. Operators such as `|` or `;` are plain characters, because
 * nothing here is ever given to a shell.
 */
export function splitCommandWords(line: string): SplitResult {
  const words: SplitWord[] = [];
  let current: SplitWord | undefined;
  const word = (): SplitWord => (current ??= { text: '', unquotedStar: false });
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (/\s/.test(ch)) {
      if (current) words.push(current);
      current = undefined;
    } else if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { ok: false, problem: `unterminated single quote in '${line}'` };
      word().text += line.slice(i + 1, end);
      i = end;
    } else if (ch === '"') {
      const w = word();
      let closed = false;
      for (i++; i < line.length; i++) {
        if (line[i] === '"') {
          closed = true;
          break;
        }
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) i++;
        w.text += line[i];
      }
      if (!closed) return { ok: false, problem: `unterminated double quote in '${line}'` };
    } else if (ch === '\\') {
      if (i + 1 >= line.length) return { ok: false, problem: `trailing backslash in '${line}'` };
      word().text += line[++i];
    } else {
      const w = word();
      w.text += ch;
      if (ch === '*') w.unquotedStar = true;
    }
  }
  if (current) words.push(current);
  return { ok: true, words };
}
