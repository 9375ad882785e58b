import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const DOC_FILES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The Markdown outside fenced blocks, where headings live (a heading's code spans are part of its anchor). */
function outsideFences(markdown: string): string {
  return markdown.replace(/^(\s*)(```|~~~)[\s\S]*?^\1\2\s*$/gm, '');
}

/** The Markdown outside fenced blocks and code spans, where links live. */
function prose(markdown: string): string {
  return outsideFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2…. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of outsideFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*_`]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g), ...text.matchAll(/^\[[^\]]+\]:\s*(\S+)/gm)].map(
    (match) => match[1],
  );
}

describe('links in README.md and docs/', () => {
  it.each(DOC_FILES)('%s: every relative link and #anchor leads somewhere', (file) => {
    const broken: string[] = [];
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, anchor] = link.split('#');
      const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      if (!existsSync(target)) {
        broken.push(`${link}: no file ${target}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(target).isDirectory() || !target.endsWith('.md'))
        broken.push(`${link}: an anchor into ${target}, which is not Markdown`);
      else if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${link}: ${target} has no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('finds a heading by the anchor GitHub gives it', () => {
    expect(anchorsOf('# Users, API keys and auth\n```sh\n# → not a heading\n```\n## Users, API keys and auth')).toEqual(
      new Set(['users-api-keys-and-auth', 'users-api-keys-and-auth-1']),
    );
    // Regression, fixed since the workers docs linked one. Was: a heading's code span was dropped from its anchor.
    expect(anchorsOf('## Several processes on one machine: `[app] workers`')).toEqual(
      new Set(['several-processes-on-one-machine-app-workers']),
    );
  });
});
