/**
 * A command file (`<name>.md` in a commands directory, the aloop design): a prompt template the
 * user runs with `/name args`, which first activates the skills it requires.
 */
export interface CommandRecord {
  /** The file name without `.md`. */
  readonly name: string;
  readonly description: string;
  /** `argument-hint`, shown to users, e.g. `<pr-number> [focus]`. */
  readonly argumentHint: string | null;
  /** `requires-skills`, in the order written, without duplicates. */
  readonly requiredSkills: readonly string[];
  /** The body after the frontmatter: `$ARGUMENTS`, `$1`…`$9` are filled in by `expandTemplate`. */
  readonly template: string;
  /** Absolute path of the file. */
  readonly path: string;
  /** The configured commands directory it came from, as written in the configuration. */
  readonly source: string;
  readonly warnings: readonly string[];
}

/** A command file that did not load, with every reason. */
export interface InvalidCommand {
  readonly path: string;
  readonly source: string;
  /** The name its file gives it. */
  readonly name: string;
  readonly errors: readonly string[];
}

/** Two commands of one name (earlier directory wins), or a command named like a loaded skill. */
export interface CommandCollision {
  readonly name: string;
  readonly kind: 'command' | 'skill';
  /** What `/name` runs. */
  readonly winner: { readonly path: string; readonly source: string };
  /**
   * What it no longer reaches: the other command file, or the skill (still reachable as `$name` and through the tools).
   */
  readonly loser: { readonly path: string; readonly source: string };
}
