import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { SkillDirectory } from '../../src/config/app-config.js';
import {
  buildSnapshot,
  discoverCommands,
  discoverSkills,
  type InvalidCommand,
  MAX_COMMAND_FILE_BYTES,
} from '@skillhost/core';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { asNobody, makeFifo, makeSocket, makeSymlink, openToEveryone, releaseFifosLater } from './special-files.js';

const dir = (path: string, configured = path): SkillDirectory => ({ configured, path });

/** The text of a command file; `fields` are frontmatter lines as written. */
function commandMd(
  description = 'Does a useful thing.',
  body = 'Do it with $ARGUMENTS.',
  fields: string[] = [],
): string {
  return ['---', `description: ${description}`, ...fields, '---', '', body, ''].join('\n');
}

const errorsOf = (invalid: readonly InvalidCommand[], path: string) =>
  invalid.find((entry) => entry.path === path)?.errors;

describe(discoverCommands.name, () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree();
  });
  afterEach(() => tree.cleanup());

  it('loads the *.md files directly in a directory, in name order, and nothing else', () => {
    tree.write(
      'c/review-pr.md',
      commandMd('Reviews a PR.', 'Review PR $1.', ['requires-skills: [code-review]', 'argument-hint: <pr-number>']),
    );
    tree.write('c/commit.md', commandMd('Writes a commit.'));
    tree.write('c/notes.txt', 'not a command');
    tree.write('c/.hidden.md', commandMd());
    tree.write('c/nested/deep.md', commandMd());
    tree.write('c/UPPER.MD', commandMd());
    const sut = discoverCommands([dir(tree.path('c'), 'c')]);
    expect(sut.commands).toEqual([
      {
        name: 'commit',
        description: 'Writes a commit.',
        argumentHint: null,
        requiredSkills: [],
        template: 'Do it with $ARGUMENTS.',
        path: tree.path('c/commit.md'),
        source: 'c',
        warnings: [],
      },
      {
        name: 'review-pr',
        description: 'Reviews a PR.',
        argumentHint: '<pr-number>',
        requiredSkills: ['code-review'],
        template: 'Review PR $1.',
        path: tree.path('c/review-pr.md'),
        source: 'c',
        warnings: [],
      },
    ]);
    expect(sut.invalid).toEqual([]);
    expect(sut.warnings).toEqual([]);
    expect(sut.directories).toEqual([{ configured: 'c', path: tree.path('c'), exists: true, commands: 2, invalid: 0 }]);
  });

  it('gives an earlier directory precedence and records each collision', () => {
    tree.write('first/deploy.md', commandMd('First.'));
    tree.write('second/deploy.md', commandMd('Second.'));
    tree.write('second/only-here.md', commandMd('Only here.'));
    tree.write('third/deploy.md', commandMd('Third.'));
    const sut = discoverCommands([
      dir(tree.path('first'), 'first'),
      dir(tree.path('second'), 'second'),
      dir(tree.path('third'), 'third'),
    ]);
    expect(sut.commands.map((c) => [c.name, c.description])).toEqual([
      ['deploy', 'First.'],
      ['only-here', 'Only here.'],
    ]);
    const winner = { path: tree.path('first/deploy.md'), source: 'first' };
    expect(sut.collisions).toEqual([
      { name: 'deploy', kind: 'command', winner, loser: { path: tree.path('second/deploy.md'), source: 'second' } },
      { name: 'deploy', kind: 'command', winner, loser: { path: tree.path('third/deploy.md'), source: 'third' } },
    ]);
    expect(sut.directories.map((d) => d.commands)).toEqual([1, 1, 0]);
  });

  it('lists each malformed file with every reason, and loads the rest', () => {
    tree.write('c/good.md', commandMd());
    tree.write('c/Bad_Name.md', commandMd());
    tree.write('c/no-description.md', '---\nargument-hint: <x>\n---\nBody\n');
    tree.write('c/bad-yaml.md', '---\ndescription: [oops\n---\nBody\n');
    tree.write('c/no-frontmatter.md', 'Just a prompt.\n');
    tree.write('c/empty-body.md', commandMd('d', ''));
    tree.write('c/nul.md', commandMd('d', 'a\0b'));
    tree.write('c/latin1.md', Buffer.concat([Buffer.from(commandMd('d', 'caf')), Buffer.from([0xe9, 0x0a])]));
    const sut = discoverCommands([dir(tree.path('c'), 'c')]);
    expect(sut.commands.map((c) => c.name)).toEqual(['good']);
    expect(sut.invalid.map((entry) => [entry.name, entry.errors])).toEqual([
      [
        'Bad_Name',
        [
          expect.stringMatching(
            /^Command name 'Bad_Name' \(the file name without \.md\) may hold only lowercase letters/,
          ),
        ],
      ],
      [
        'bad-yaml',
        ['Invalid YAML in frontmatter: unexpected end of the stream within a flow collection (line 3, column 1)'],
      ],
      ['empty-body', ['The file has no prompt template after its frontmatter; write the prompt below the closing ---']],
      ['latin1', ['latin1.md is not valid UTF-8 text; save it as UTF-8']],
      [
        'no-description',
        ["Missing required field 'description': add `description: <what the command does>` to the frontmatter"],
      ],
      [
        'no-frontmatter',
        [
          'A command file must start with YAML frontmatter: a first line ---, fields such as `description: …`, ' +
            'then a line ---',
        ],
      ],
      ['nul', [expect.stringMatching(/^The file contains a NUL byte/)]],
    ]);
    expect(sut.invalid[0]).toEqual({
      path: tree.path('c/Bad_Name.md'),
      source: 'c',
      name: 'Bad_Name',
      errors: [expect.any(String)],
    });
    expect(sut.directories[0]).toMatchObject({ commands: 1, invalid: 7 });
  });

  it('reads a file of exactly 256 KiB and refuses a larger one without reading it', () => {
    const head = commandMd('Big.', '');
    tree.write('c/exact.md', head + 'x'.repeat(MAX_COMMAND_FILE_BYTES - Buffer.byteLength(head)));
    tree.write('c/huge.md', head + 'x'.repeat(5 * MAX_COMMAND_FILE_BYTES));
    const sut = discoverCommands([dir(tree.path('c'))]);
    expect(sut.commands.map((c) => [c.name, c.template.length])).toEqual([
      ['exact', MAX_COMMAND_FILE_BYTES - Buffer.byteLength(head)],
    ]);
    expect(errorsOf(sut.invalid, tree.path('c/huge.md'))).toEqual([
      `huge.md is ${5 * MAX_COMMAND_FILE_BYTES + Buffer.byteLength(head)} bytes; a command file ` +
        `may be at most 256 KiB (262144 bytes): shorten the prompt, or move long material into a skill the ` +
        `command requires`,
    ]);
  });

  it('follows a symbolic link to a command file, and reports one that leads nowhere', () => {
    tree.write('elsewhere/shared.md', commandMd('Shared.'));
    makeSymlink(tree.path('elsewhere/shared.md'), tree.path('c/linked.md'));
    makeSymlink(tree.path('nowhere.md'), tree.path('c/dangling.md'));
    const sut = discoverCommands([dir(tree.path('c'))]);
    expect(sut.commands.map((c) => [c.name, c.description, c.path])).toEqual([
      ['linked', 'Shared.', tree.path('c/linked.md')],
    ]);
    expect(errorsOf(sut.invalid, tree.path('c/dangling.md'))).toEqual([
      'dangling.md is a symbolic link to a file that does not exist; point it at a command file or remove it',
    ]);
  });

  it('is quiet about a missing default directory but warns about a missing configured one', () => {
    tree.write('real/x.md', commandMd());
    const sut = discoverCommands([
      dir(tree.path('.skillhost/commands'), './.skillhost/commands'),
      dir(tree.path('typo'), './typo'),
      dir(tree.path('real'), 'real'),
    ]);
    expect(sut.commands.map((c) => c.name)).toEqual(['x']);
    expect(sut.warnings).toEqual([
      `Commands directory './typo' (${tree.path('typo')}) does not exist or is not a readable folder; skipped`,
    ]);
    expect(sut.directories.map((d) => d.exists)).toEqual([false, false, true]);
  });

  it('answers nothing at all for no directories', () => {
    expect(discoverCommands([])).toEqual({ commands: [], invalid: [], collisions: [], warnings: [], directories: [] });
  });
});

/**
 * Special files named like command files: a FIFO opened for reading would wait for a writer and
 * freeze start-up and every reload (discovery is synchronous), so none may be opened that way.
 */
describe('command discovery among special files', () => {
  let tree: TempTree;
  let socket: Server;
  let release: { stop(): void };
  beforeAll(async () => {
    tree = tempTree();
    tree.write('c/good.md', commandMd());
    makeFifo(tree.path('c/fifo.md'));
    makeFifo(tree.path('elsewhere/pipe'));
    makeSymlink(tree.path('elsewhere/pipe'), tree.path('c/link-to-fifo.md'));
    socket = await makeSocket(tree.path('c/socket.md'));
    makeSymlink('/dev/zero', tree.path('c/device.md'));
    mkdirSync(tree.path('c/folder.md/inner.md'), { recursive: true });
    writeFileSync(tree.path('c/folder.md/inner.md/x.md'), commandMd());
    release = releaseFifosLater([tree.path('c/fifo.md'), tree.path('elsewhere/pipe')], 2000);
  });
  afterAll(async () => {
    release.stop();
    await new Promise((resolve) => socket.close(resolve));
    tree.cleanup();
  });

  it(
    'reports a FIFO, a symlink to one, a socket and a device as invalid at once, and passes over a folder named ' +
      'x.md',
    () => {
      // No clock is read: a blocking open of the FIFO would never return, hanging the run rather than passing.
      const sut = discoverCommands([dir(tree.path('c'))]);
      expect(sut.commands.map((c) => c.name)).toEqual(['good']);
      expect(sut.invalid.map((entry) => [entry.name, entry.errors])).toEqual([
        ['device', ['device.md is a character device, not a regular file; replace it with a text file']],
        ['fifo', ['fifo.md is a FIFO (named pipe), not a regular file; replace it with a text file']],
        ['link-to-fifo', ['link-to-fifo.md is a FIFO (named pipe), not a regular file; replace it with a text file']],
        ['socket', ['socket.md is a socket, not a regular file; replace it with a text file']],
      ]);
      expect(sut.directories[0]).toMatchObject({ commands: 1, invalid: 4 });
    },
  );
});

describe('command discovery as a user who cannot read everything', () => {
  let tree: TempTree;
  beforeAll(() => {
    tree = tempTree();
    tree.write('c/good.md', commandMd());
    tree.write('c/locked.md', commandMd());
    tree.write('locked-dir/x.md', commandMd());
    openToEveryone(tree.root, tree.path('c'), tree.path('c/good.md'));
    chmodSync(tree.path('c/locked.md'), 0o000);
    chmodSync(tree.path('locked-dir'), 0o000);
  });
  afterAll(() => {
    chmodSync(tree.path('locked-dir'), 0o755);
    tree.cleanup();
  });

  it('lists an unreadable command file as invalid with the reason', () => {
    const sut = asNobody(() => discoverCommands([dir(tree.path('c'), 'c')]));
    expect(sut.commands.map((c) => c.name)).toEqual(['good']);
    expect(sut.invalid).toEqual([
      {
        path: tree.path('c/locked.md'),
        source: 'c',
        name: 'locked',
        errors: [
          "locked.md cannot be read: permission denied (EACCES); the server's user needs read access to it and " +
            'search (x) access to its folder',
        ],
      },
    ]);
  });

  it('says why an unreadable directory is skipped, even a default one', () => {
    const sut = asNobody(() => discoverCommands([dir(tree.path('locked-dir'), './commands')]));
    expect(sut.warnings).toEqual([
      `Commands directory './commands' (${tree.path('locked-dir')}) cannot be read: permission denied (EACCES); ` +
        `the server's user needs read and search (r-x) access to it; skipped`,
    ]);
    expect(sut.directories[0].exists).toBe(false);
  });
});

describe(`${buildSnapshot.name} with commands`, () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree();
  });
  afterEach(() => tree.cleanup());

  function snapshot() {
    const skills = discoverSkills({
      directories: [dir(tree.path('skills'), 'skills')],
      mode: 'standard',
      maxDepth: 1,
      maxSkills: 100,
    });
    const commands = discoverCommands([dir(tree.path('commands'), 'commands'), dir(tree.path('more'), 'more')]);
    return buildSnapshot(
      skills,
      { validation: 'standard', includeLocation: false, catalogueFormat: 'json' },
      { scannedAt: new Date(), durationMs: 1 },
      commands,
    );
  }

  it(
    'holds the commands by name and records a command named like a loaded skill, after the command/command ' +
      'collisions',
    () => {
      writeSkill(tree, 'skills', 'pdf');
      writeSkill(tree, 'skills', 'Broken');
      tree.write('commands/pdf.md', commandMd('Fills PDF forms.'));
      tree.write('commands/zeta.md', commandMd());
      tree.write('commands/broken.md', commandMd());
      tree.write('more/zeta.md', commandMd());
      const sut = snapshot();
      expect([...sut.commands.keys()]).toEqual(['broken', 'pdf', 'zeta']);
      expect(sut.commandReport.collisions).toEqual([
        {
          name: 'zeta',
          kind: 'command',
          winner: { path: tree.path('commands/zeta.md'), source: 'commands' },
          loser: { path: tree.path('more/zeta.md'), source: 'more' },
        },
        {
          name: 'pdf',
          kind: 'skill',
          winner: { path: tree.path('commands/pdf.md'), source: 'commands' },
          loser: { path: tree.path('skills/pdf'), source: 'skills' },
        },
      ]);
      // The skill itself is untouched: still loaded, still in the catalogue.
      expect([...sut.skills.keys()]).toEqual(['pdf']);
      expect(sut.catalogue('json')).toContain('"name":"pdf"');
    },
  );

  it('reports the commands directories, invalid files and warnings', () => {
    tree.write('commands/Bad.md', commandMd());
    const sut = snapshot();
    expect(sut.commandReport).toEqual({
      directories: [
        { configured: 'commands', path: tree.path('commands'), exists: true, commands: 0, invalid: 1 },
        { configured: 'more', path: tree.path('more'), exists: false, commands: 0, invalid: 0 },
      ],
      invalid: [
        {
          path: tree.path('commands/Bad.md'),
          source: 'commands',
          name: 'Bad',
          errors: [expect.stringMatching(/^Command name 'Bad'/)],
        },
      ],
      collisions: [],
      warnings: [
        `Commands directory 'more' (${tree.path('more')}) does not exist or is not a readable folder; skipped`,
      ],
    });
  });
});
