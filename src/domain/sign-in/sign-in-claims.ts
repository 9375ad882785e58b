import { AppError, ErrorCode } from '@skillhost/core';
import { USER_NAME_PATTERN } from '../users/user.types.js';

/** Limits on what a provider may send about a person: more is refused, not cut (a cut group name is another group). */
export const CLAIM_LIMITS = Object.freeze({
  subjectChars: 255,
  nameChars: 256,
  emailChars: 320,
  groups: 256,
  groupChars: 256,
  /** All the claims, as JSON. */
  totalBytes: 64 * 1024,
});

/** What a sign-in needs of the claims, checked. */
export interface PersonClaims {
  subject: string;
  /** The `user_claim` value, as sent. */
  name: string;
  /** Lower-cased; only when the provider says it is verified. */
  verifiedEmail: string | null;
  /** Undefined when no `groups_claim` is configured or the provider sent none. */
  groups: readonly string[] | undefined;
}

/** Reads and checks the claims; anything missing, mistyped or too large is SIGN_IN_CLAIMS_INVALID, naming the claim. */
export function readPersonClaims(
  claims: Record<string, unknown>,
  settings: { userClaim: string; groupsClaim: string },
): PersonClaims {
  const size = Buffer.byteLength(JSON.stringify(claims));
  if (size > CLAIM_LIMITS.totalBytes)
    throw invalid(`The provider's claims take ${size} bytes, more than ${CLAIM_LIMITS.totalBytes}.`);
  const subject = boundedString(claims, 'sub', CLAIM_LIMITS.subjectChars);
  const name = boundedString(claims, settings.userClaim, CLAIM_LIMITS.nameChars);
  const email = claims.email === undefined ? undefined : boundedString(claims, 'email', CLAIM_LIMITS.emailChars);
  const verifiedEmail = email !== undefined && claims.email_verified === true ? email.toLowerCase() : null;
  return { subject, name, verifiedEmail, groups: groupsOf(claims, settings.groupsClaim) };
}

function groupsOf(claims: Record<string, unknown>, claim: string): readonly string[] | undefined {
  if (claim === '' || claims[claim] === undefined) return undefined;
  const value = claims[claim];
  if (!Array.isArray(value) || value.some((group) => typeof group !== 'string'))
    throw invalid(`The claim '${claim}' (groups_claim) must be an array of strings.`);
  if (value.length > CLAIM_LIMITS.groups)
    throw invalid(`The claim '${claim}' lists ${value.length} groups, more than ${CLAIM_LIMITS.groups}.`);
  const long = (value as string[]).find((group) => group.length === 0 || group.length > CLAIM_LIMITS.groupChars);
  if (long !== undefined)
    throw invalid(`A group in '${claim}' is empty or longer than ${CLAIM_LIMITS.groupChars} characters.`);
  return [...new Set(value as string[])];
}

function boundedString(claims: Record<string, unknown>, claim: string, max: number): string {
  const value = claims[claim];
  if (typeof value !== 'string' || value.trim() === '')
    throw invalid(`The provider sent no '${claim}' claim (a non-empty string); check [app.auth.oidc] and the scopes.`);
  if (value.length > max) throw invalid(`The claim '${claim}' is ${value.length} characters long, more than ${max}.`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(`The claim '${claim}' holds a control character.`);
  return value;
}

/**
 * A user name from the `user_claim` value: lower-case, `@domain` of an email dropped, characters a user name cannot
 * hold become `-`, at most 64 characters. Undefined when nothing usable is left.
 */
export function userNameFrom(value: string): string | undefined {
  const local = value.includes('@') ? value.slice(0, value.indexOf('@')) : value;
  const name = local
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/[-.]+$/, '');
  return USER_NAME_PATTERN.test(name) ? name : undefined;
}

function invalid(message: string): AppError {
  return new AppError(ErrorCode.SIGN_IN_CLAIMS_INVALID, message);
}
