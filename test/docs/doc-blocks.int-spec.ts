import { describe, expect, it } from '@jest/globals';
import {
  extractBlocks,
  matchesExpected,
  parseDirective,
  rewriteAddresses,
  runnerOf,
  splitShellSteps,
} from './doc-blocks.js';

const markdown = [
  'Intro',
  '<!-- docs-test: server -->',
  '```sh',
  'npm start',
  '```',
  '',
  '1. A step:',
  '',
  '   <!-- docs-test: not run: needs a Docker engine here -->',
  '   ```sh',
  '   docker compose up',
  '   ```',
  '```text',
  'a/',
  '```',
].join('\n');

describe(extractBlocks.name, () => {
  it('reads each fenced block with its language, line, list indentation removed, and the directive above it', () => {
    const sut = extractBlocks('x.md', markdown);
    expect(sut).toEqual([
      { file: 'x.md', line: 3, lang: 'sh', text: 'npm start', directive: { kind: 'server' } },
      {
        file: 'x.md',
        line: 10,
        lang: 'sh',
        text: 'docker compose up',
        directive: { kind: 'not-run', reason: 'needs a Docker engine here' },
      },
      { file: 'x.md', line: 13, lang: 'text', text: 'a/' },
    ]);
    expect(sut.map(runnerOf)).toEqual(['server', undefined, undefined]);
  });

  it('refuses a directive it does not know, and a "not run" without a reason', () => {
    expect(parseDirective('skip')).toMatch(/unknown docs-test directive "skip"/);
    expect(parseDirective('not run: ')).toMatch(/needs a reason/);
  });
});

describe(splitShellSteps.name, () => {
  it('splits a block into commands with their expected output and exit status; plain comments are not output', () => {
    const sut = splitShellSteps(
      [
        '# a comment',
        'A=$(echo 1)',
        'curl -s x \\',
        "  -d '{}'",
        '# → {"id":"…"}',
        '# → …',
        'false',
        '# [exit 1]',
      ].join('\n'),
    );
    expect(sut).toEqual([
      { line: 2, command: 'A=$(echo 1)', expected: [], exitCode: 0 },
      { line: 3, command: "curl -s x \\\n  -d '{}'", expected: ['{"id":"…"}', '…'], exitCode: 0 },
      { line: 7, command: 'false', expected: [], exitCode: 1 },
    ]);
  });
});

describe(matchesExpected.name, () => {
  it('takes … as anything within a line and a line of … as any number of lines', () => {
    expect(matchesExpected(['{"id":"…","title":"tour"}'], '{"id":"a-b","title":"tour"}\n')).toBe(true);
    expect(matchesExpected(['{"id":"…","title":"tour"}'], '{"id":"a-b","title":"notes"}')).toBe(false);
    expect(matchesExpected(['first', '…', 'last'], 'first\nlast')).toBe(true);
    expect(matchesExpected(['first', '…', 'last'], 'first\n2\n3\nlast')).toBe(true);
    expect(matchesExpected(['first', '…', 'last'], 'first\n2\nlast but one')).toBe(false);
    expect(matchesExpected(['a'], 'a\nb')).toBe(false);
  });
});

describe(rewriteAddresses.name, () => {
  it('points the default port and a local Ollama at the live server and the scripted model', () => {
    const sut = rewriteAddresses(
      'OPENAI_BASE_URL=http://127.0.0.1:11434/v1 curl http://127.0.0.1:3000/v1 ws://localhost:3000/graphql ' +
        'http://127.0.0.1:30000',
      { server: 'http://127.0.0.1:4567', model: 'http://127.0.0.1:999/v1' },
    );
    expect(sut).toBe(
      'OPENAI_BASE_URL=http://127.0.0.1:999/v1 curl http://127.0.0.1:4567/v1 ws://localhost:4567/graphql ' +
        'http://127.0.0.1:30000',
    );
  });
});
