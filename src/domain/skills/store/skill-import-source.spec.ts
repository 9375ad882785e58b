import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { parseImportSource } from './skill-import-source.js';

function problemOf(text: string): string {
  try {
    parseImportSource(text);
  } catch (error) {
    if (AppError.isInstance(error) && error.code === ErrorCode.VALIDATION_FAILED) return error.message;
    throw error;
  }
  throw new Error(`'${text}' was accepted`);
}

describe(parseImportSource.name, () => {
  it.each([
    ['git+https://host/repo.git', { kind: 'git', url: 'https://host/repo.git', ref: undefined, path: '' }],
    ['git+https://host/repo.git#v1.2', { kind: 'git', url: 'https://host/repo.git', ref: 'v1.2', path: '' }],
    [
      'git+https://host/repo.git#release/2026:skills/pdf/',
      { kind: 'git', url: 'https://host/repo.git', ref: 'release/2026', path: 'skills/pdf' },
    ],
    [
      'git+file:///srv/skills.git#:skills',
      { kind: 'git', url: 'file:///srv/skills.git', ref: undefined, path: 'skills' },
    ],
    [
      'https://host/.well-known/agent-skills/index.json',
      { kind: 'index', url: 'https://host/.well-known/agent-skills/index.json', skill: undefined },
    ],
    [
      'https://host/.well-known/agent-skills/index.json#pdf-tools',
      { kind: 'index', url: 'https://host/.well-known/agent-skills/index.json', skill: 'pdf-tools' },
    ],
  ])('reads %s', (text, expected) => {
    expect(parseImportSource(text)).toEqual(expected);
  });

  it.each([
    ['', 'give a source of 1 to 2048 characters'],
    ['x'.repeat(2049), 'give a source of 1 to 2048 characters'],
    ['git+https://host/r.git #v1', 'a space or a control character'],
    ['git+ssh://host/r.git', 'git+https://, git+http:// or git+file://'],
    ['git+ext::sh -c touch', 'a space or a control character'],
    ['git+https://user:secret@host/r.git', 'put no credentials in the URL'],
    ['https://user@host/index.json', 'put no credentials in the URL'],
    ['git+https://host/r.git?upload-pack=x', 'takes no query string'],
    ['git+https://host/r.git#-oProxyCommand=x', 'is not a git branch, tag or commit'],
    ['git+https://host/r.git#a..b', 'is not a git branch, tag or commit'],
    ['git+https://host/r.git#v1:a/../../etc', "without '..', '.' or '//'"],
    ['git+https://host/r.git#v1:a//b', "without '..', '.' or '//'"],
    ['git+https://host/r.git#v1:a\\b', "without '..', '.' or '//'"],
    ['https://host/index.json#Not_A_Name', 'is not a skill name'],
    ['file:///etc/passwd', "'file:' is no source kind"],
    ['./skills/pdf', 'it is not a URL'],
  ])('refuses %s (VALIDATION_FAILED): %s', (text, problem) => {
    const message = problemOf(text);
    expect(message).toContain(problem);
    expect(message).toContain('Give a source such as');
  });
});
