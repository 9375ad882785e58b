import { AppError, ErrorCode } from '@skillhost/core';

/**
 * Where an import reads skills from:
 * - `git+https://host/repo.git`, `git+http://…` or `git+file:///path/repo.git`, with an optional
 *   fragment `#REF`, `#REF:PATH` or `#:PATH` (a git ref never holds a `:`): the skill folder at PATH
 *   (the repository's root without one), or every skill folder under it;
 * - `https://host/.well-known/agent-skills/index.json` (another server's discovery index), with an
 *   optional `#skill-name` for one of its skills.
 */
export type ImportSource =
  | { kind: 'git'; url: string; ref: string | undefined; path: string }
  | { kind: 'index'; url: string; skill: string | undefined };

const MAX_SOURCE_LENGTH = 2048;
/** Branch and tag names as git allows them, and commit ids; nothing that reads as an option. */
const REF_PATTERN = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/+-]{1,200}(?<![./])$/;
const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
const EXAMPLES =
  "'git+https://host/repo.git#v1.2:skills/pdf', 'git+file:///srv/skills.git' or " +
  "'https://host/.well-known/agent-skills/index.json#pdf'";

/** The source a string names, or VALIDATION_FAILED naming the problem. */
export function parseImportSource(text: string): ImportSource {
  if (text.length === 0 || text.length > MAX_SOURCE_LENGTH)
    throw invalidSource(text, `give a source of 1 to ${MAX_SOURCE_LENGTH} characters`);
  if (/[\p{Cc}\s]/u.test(text)) throw invalidSource(text, 'it has a space or a control character');
  if (text.startsWith('git+')) return parseGitSource(text);
  const url = parseUrl(text);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidSource(text, `'${url.protocol}' is no source kind`);
  if (url.username !== '' || url.password !== '') throw invalidSource(text, 'put no credentials in the URL');
  const skill = url.hash === '' ? undefined : decodeURIComponent(url.hash.slice(1));
  if (skill !== undefined && !SKILL_NAME_PATTERN.test(skill))
    throw invalidSource(text, `'#${skill}' is not a skill name (lower-case letters, digits and '-')`);
  url.hash = '';
  return { kind: 'index', url: url.href, skill };
}

function parseGitSource(text: string): ImportSource {
  const hashAt = text.indexOf('#');
  const location = hashAt === -1 ? text.slice(4) : text.slice(4, hashAt);
  const url = parseUrl(location);
  if (!['https:', 'http:', 'file:'].includes(url.protocol))
    throw invalidSource(text, `git sources are git+https://, git+http:// or git+file://, not git+${url.protocol}//`);
  if (url.username !== '' || url.password !== '') throw invalidSource(text, 'put no credentials in the URL');
  if (url.search !== '') throw invalidSource(text, 'a git URL takes no query string');
  const fragment = hashAt === -1 ? '' : text.slice(hashAt + 1);
  const colon = fragment.indexOf(':');
  const ref = (colon === -1 ? fragment : fragment.slice(0, colon)) || undefined;
  const path = colon === -1 ? '' : fragment.slice(colon + 1).replace(/^\/+|\/+$/g, '');
  if (ref !== undefined && !REF_PATTERN.test(ref))
    throw invalidSource(text, `'${ref}' is not a git branch, tag or commit`);
  const segments = path === '' ? [] : path.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\\')))
    throw invalidSource(text, `the path '${path}' must be relative, inside the repository, without '..', '.' or '//'`);
  return { kind: 'git', url: url.href, ref, path };
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw invalidSource(text, 'it is not a URL');
  }
}

function invalidSource(text: string, problem: string): AppError {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new AppError(
    ErrorCode.VALIDATION_FAILED,
    `Cannot import from '${shown}': ${problem}. Give a source such as ${EXAMPLES}.`,
    { problems: [`source: ${problem}`] },
  );
}

/** The source as a version records it: where, which ref asked for, which commit or digest came. */
export interface VersionSource {
  url: string;
  ref?: string;
  path?: string;
  commit?: string;
  digest?: string;
}
