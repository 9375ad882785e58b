/** What a tool card shows without its output. */
export interface ToolCardSummary {
  skill: string | null;
  path?: string;
  type?: string;
  count?: number;
  candidates?: string[];
  /**
   * `skills.runScript`: the command as run, its exit code (null when a signal ended it), and whether the time limit
   * did.
   */
  command?: string;
  exitCode?: number | null;
  timedOut?: boolean;
  /**
   * An activation in a chat: the version activated (`sha256:…`), which the chat reads until it activates the skill
   * again.
   */
  version?: string;
  /** An activation in a chat whose version could not be kept (past `max_install_bytes`): why. */
  versionWarning?: string;
  truncated: boolean;
}

/** A user message that ran a command: what the user typed is `content`, the model got `prompt`. */
export interface StoredCommand {
  name: string;
  arguments: string;
  prompt: string;
}

/** A tool card as stored: the user-visible record of one tool call. */
export interface StoredToolCard {
  id: string;
  tool: string;
  args: unknown;
  status: 'ok' | 'error';
  summary: ToolCardSummary;
  output: string;
  durationMs: number;
}
