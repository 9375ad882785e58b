import { extname } from 'node:path';

/**
 * Types a browser runs, or renders as a document that can run script, when it opens the file
 * itself: markup (HTML, XHTML, XML with its stylesheets, SVG), scripts, styles, PDF, Flash and web
 * archives.
 */
const ACTIVE_EXTENSIONS = new Set([
  '.html',
  '.htm',
  '.shtml',
  '.xhtml',
  '.xht',
  '.xml',
  '.xsl',
  '.xslt',
  '.svg',
  '.svgz',
  '.js',
  '.mjs',
  '.cjs',
  '.css',
  '.pdf',
  '.swf',
  '.mht',
  '.mhtml',
]);

/** Whether a file of this name is one a browser would run or render as a page (by its extension, in any case). */
export function isActiveContent(path: string): boolean {
  return ACTIVE_EXTENSIONS.has(extname(path).toLowerCase());
}

/**
 * The headers a skill's file goes out with, on every route that serves one (the REST resources
 * route, the discovery index): someone's file, never a page of this server. A sandboxing policy,
 * so that even a browser that renders it runs nothing as this origin; and a download rather than a
 * page, for every file (`always`) or for the active types (`active`, where the file is sent as
 * plain text anyway). Sniffing is forbidden on every answer (http-hardening.ts).
 */
export function skillFileHeaders(path: string, download: 'always' | 'active'): Record<string, string> {
  const headers: Record<string, string> = { 'content-security-policy': "default-src 'none'; sandbox" };
  if (download === 'always' || isActiveContent(path)) headers['content-disposition'] = 'attachment';
  return headers;
}
