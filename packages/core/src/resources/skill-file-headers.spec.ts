import { describe, expect, it } from '@jest/globals';
import { isActiveContent, skillFileHeaders } from './skill-file-headers.js';

describe(isActiveContent.name, () => {
  it.each([
    'page.html',
    'a/b/PAGE.HTM',
    'logo.svg',
    'feed.xml',
    'app.xhtml',
    'run.js',
    'mod.mjs',
    'style.css',
    'doc.pdf',
    'style.xsl',
  ])('%s is active', (path) => {
    expect(isActiveContent(path)).toBe(true);
  });

  it.each([
    'SKILL.md',
    'notes.txt',
    'data.json',
    'script.sh',
    'run.py',
    'image.png',
    'html',
    'svg.txt',
    'archive.html.txt',
  ])('%s is not', (path) => {
    expect(isActiveContent(path)).toBe(false);
  });
});

describe(skillFileHeaders.name, () => {
  const policy = "default-src 'none'; sandbox";

  it('always sandboxes; downloads the active types only, when asked to', () => {
    expect(skillFileHeaders('references/page.html', 'active')).toEqual({
      'content-security-policy': policy,
      'content-disposition': 'attachment',
    });
    expect(skillFileHeaders('references/notes.md', 'active')).toEqual({ 'content-security-policy': policy });
  });

  it('downloads every file when asked to always', () => {
    expect(skillFileHeaders('SKILL.md', 'always')).toEqual({
      'content-security-policy': policy,
      'content-disposition': 'attachment',
    });
  });
});
