import { AppError, ErrorCode } from '@skillhost/core';

const MAX_RETURN_TO_LENGTH = 2048;

/**
 * Where the browser goes after signing in: a path on this server only. `//evil.example` and `/\evil.example` are
 * read by browsers as another host, and control characters can split a header, so each is refused rather than
 * cleaned up. Absent: the page, `/`.
 */
export function checkedReturnTo(returnTo: string | undefined): string {
  if (returnTo === undefined || returnTo === '') return '/';
  const refuse = (why: string) =>
    new AppError(
      ErrorCode.SIGN_IN_RETURN_TO_INVALID,
      `returnTo ${why}: it must be a path on this server, such as \`/\` or \`/?chat=…\`.`,
      { returnTo: returnTo.slice(0, 200) },
    );
  if (returnTo.length > MAX_RETURN_TO_LENGTH) throw refuse(`is longer than ${MAX_RETURN_TO_LENGTH} characters`);
  if (!returnTo.startsWith('/')) throw refuse('does not start with `/`');
  if (returnTo.startsWith('//') || returnTo.startsWith('/\\')) throw refuse('names another host');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(returnTo)) throw refuse('holds a control character or a backslash');
  const resolved = new URL(returnTo, 'http://skillhost.invalid');
  if (resolved.origin !== 'http://skillhost.invalid') throw refuse('names another host');
  return resolved.pathname + resolved.search + resolved.hash;
}
