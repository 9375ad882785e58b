/**
 * `skill://` URIs of the MCP Skills extension: `skill://<name>/<path>`, the skill's name as the
 * authority (Skillhost serves every skill at the top level, with no organisational prefix) and each
 * path segment percent-encoded. The skill's root directory is `skill://<name>`, with no trailing
 * slash. https://github.com/modelcontextprotocol/ext-skills (Resource Mapping)
 */
const SCHEME = 'skill://';

/** The URI of a skill's file (`SKILL.md` by default). */
export function skillFileUri(name: string, path = 'SKILL.md'): string {
  return `${skillRootUri(name)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** The skill's root directory resource. */
export function skillRootUri(name: string): string {
  return `${SCHEME}${encodeURIComponent(name)}`;
}

/**
 * The skill name and the path inside it (`''` for the root) that a URI names, or undefined for
 * anything but a URI exactly as this server writes it: another scheme, a query or fragment, a
 * trailing slash, an empty, `.` or `..` segment, an escape that is not UTF-8 or that hides a `/`,
 * NUL or backslash, or any other spelling of a name than the published one (`%61lpha` for `alpha`).
 * One file has one URI, so a read is always of a file the listing describes.
 */
export function parseSkillUri(uri: string): { name: string; path: string } | undefined {
  if (!uri.startsWith(SCHEME) || /[?#]/.test(uri)) return undefined;
  const segments = uri.slice(SCHEME.length).split('/').map(decodeSegment);
  if (
    segments.some(
      (segment) =>
        segment === undefined || segment === '' || segment === '.' || segment === '..' || /[\0\\/]/.test(segment),
    )
  )
    return undefined;
  const [name, ...rest] = segments as string[];
  const path = rest.join('/');
  const canonical = path === '' ? skillRootUri(name) : skillFileUri(name, path);
  return canonical === uri ? { name, path } : undefined;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  py: 'text/x-python',
  sh: 'application/x-sh',
  bash: 'application/x-sh',
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  ts: 'text/typescript',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  zip: 'application/zip',
};

/** Every type `mimeTypeOf` answers (the discovery index's file route documents them). */
export const PUBLISHED_MIME_TYPES: readonly string[] = [
  ...new Set([...Object.values(MIME_TYPES), 'application/octet-stream']),
];

/** A file's MIME type by its extension; `application/octet-stream` when unknown. */
export function mimeTypeOf(path: string): string {
  const file = path.slice(path.lastIndexOf('/') + 1);
  const dot = file.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  const extension = file.slice(dot + 1).toLowerCase();
  return Object.hasOwn(MIME_TYPES, extension) ? MIME_TYPES[extension] : 'application/octet-stream';
}
