import { describe, expect, it } from '@jest/globals';
import { locateFrontmatter } from './frontmatter-reader.js';

function locate(text: string, atEof = true) {
  const bytes = Buffer.from(text, 'utf8');
  const location = locateFrontmatter(bytes, bytes.length, atEof);
  if (location.kind !== 'found') return location;
  return {
    kind: location.kind,
    yaml: bytes.toString('utf8', location.yamlStart, location.yamlEnd),
    body: bytes.toString('utf8', location.bodyStart),
  };
}

describe(locateFrontmatter.name, () => {
  it('finds the block between the opening and the first closing fence line', () => {
    expect(locate('---\nname: a\n---\n# Body\n')).toEqual({ kind: 'found', yaml: 'name: a\n', body: '# Body\n' });
  });

  it('does not close at a --- inside a value', () => {
    expect(locate('---\ndescription: a --- b\nx: ---y\n---\nbody')).toEqual({
      kind: 'found',
      yaml: 'description: a --- b\nx: ---y\n',
      body: 'body',
    });
  });

  it('does not close at a line that only starts with ---', () => {
    expect(locate('---\na: b\n----\n---\nbody')).toMatchObject({ yaml: 'a: b\n----\n' });
  });

  it('accepts a UTF-8 BOM and CRLF line ends', () => {
    expect(locate('\ufeff---\r\nname: a\r\n---\r\nbody')).toEqual({ kind: 'found', yaml: 'name: a\r\n', body: 'body' });
  });

  it('accepts trailing spaces on fence lines and a closing fence at the end of the file', () => {
    expect(locate('---  \nname: a\n--- ')).toEqual({ kind: 'found', yaml: 'name: a\n', body: '' });
  });

  it('waits for more bytes before accepting a fence that may continue', () => {
    expect(locate('---\nname: a\n---', false)).toEqual({ kind: 'unclosed' });
  });

  it('reports a file without an opening fence', () => {
    expect(locate('# Title\n---\nname: a\n---\n')).toEqual({ kind: 'missing-open' });
    expect(locate('')).toEqual({ kind: 'missing-open' });
    expect(locate('---name: a\n---\n')).toEqual({ kind: 'missing-open' });
  });

  it('reports an unclosed block', () => {
    expect(locate('---\nname: a\ndescription: b\n')).toEqual({ kind: 'unclosed' });
  });
});
