import { z } from 'zod';
import { type ScriptRun, scriptsDisabledError } from './tool-ports.js';
import { defineTool, MAX_PATH_ARGUMENT, MAX_SKILL_NAME_ARGUMENT, textArgument } from './skill-tool.js';

const MAX_ARGS = 64;
const MAX_ARG_CHARS = 10_000;
const MAX_STDIN_CHARS = 1_000_000;

/** `skills.runScript`: offered only while `[app.scripts] enabled`; the script runs in the bubblewrap sandbox. */
export const runScriptTool = defineTool({
  name: 'skills.runScript',
  wireName: 'skills_runScript',
  description:
    "Run one of a skill's scripts (a file in its folder, e.g. scripts/extract.py) in a sandbox: no network, the " +
    "skill folder read-only, only /tmp writable. Use it only when the skill's instructions say to run that " +
    'script. Arguments are passed as separate words, never through a shell.',
  input: z.strictObject({
    name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'The skill name.'),
    path: textArgument(MAX_PATH_ARGUMENT, 'The script, relative to the skill folder, e.g. scripts/extract.py.'),
    args: z
      .array(
        z
          .string({ error: 'must be a string' })
          .max(MAX_ARG_CHARS, { error: `must be at most ${MAX_ARG_CHARS} characters` })
          .refine((arg) => !arg.includes('\0'), { error: 'must not contain a NUL character' }),
        { error: 'must be a list of strings' },
      )
      .max(MAX_ARGS, { error: `must hold at most ${MAX_ARGS} arguments` })
      .optional()
      .describe('Command-line arguments, each one word as the script receives it.'),
    stdin: z
      .string({ error: 'must be a string' })
      .max(MAX_STDIN_CHARS, { error: `must be at most ${MAX_STDIN_CHARS} characters` })
      .optional()
      .describe("Text for the script's standard input."),
  }),
  example: '{"name": "<skill>", "path": "scripts/run.sh", "args": ["--help"]}',
  nulAllowed: ['path'],
  // It runs code, though in a sandbox that can write only its own /tmp and reach no network.
  annotations: {
    title: "Run a skill's script",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  async execute({ name, path, args, stdin }: { name: string; path: string; args?: string[]; stdin?: string }, context) {
    const skill = context.registry.get(name);
    if (context.scripts === undefined) throw scriptsDisabledError();
    const run = await context.scripts.run({ skill, path, args: args ?? [], stdin, caller: context.caller });
    return {
      output: renderRun(run),
      summary: {
        skill: skill.name,
        path: run.path,
        command: run.command,
        exitCode: run.exitCode,
        timedOut: run.timedOut,
        truncated: run.truncated,
      },
      failed: run.exitCode !== 0,
    };
  },
});

/** What the model reads: the command, how it ended and in how long, then the output. */
export function renderRun(run: ScriptRun): string {
  const ending = run.timedOut
    ? `stopped at the time limit (${run.signal ?? 'killed'})`
    : run.exitCode === null
      ? `ended by signal ${run.signal}`
      : `exit code ${run.exitCode}`;
  const cut = run.truncated ? ', output cut' : '';
  return `$ ${run.command}\n[${ending}, ${Math.round(run.durationMs)} ms${cut}]\n${run.output}`;
}
