/**
 * Domain errors. Services throw `AppError` with a stable code; one table maps codes to HTTP
 * statuses (`httpStatusOf`; the server's exception filter uses it), so no service knows about HTTP.
 */
export enum ErrorCode {
  SKILL_NOT_FOUND = 'SKILL_NOT_FOUND',
  SKILL_DISABLED = 'SKILL_DISABLED',
  SKILL_VERSION_NOT_FOUND = 'SKILL_VERSION_NOT_FOUND',
  SKILL_SWITCH_LOCKED = 'SKILL_SWITCH_LOCKED',
  SKILL_QUOTA_EXCEEDED = 'SKILL_QUOTA_EXCEEDED',
  RESOURCE_NOT_FOUND = 'RESOURCE_NOT_FOUND',
  RESOURCE_OUTSIDE_SKILL = 'RESOURCE_OUTSIDE_SKILL',
  RESOURCE_IS_DIRECTORY = 'RESOURCE_IS_DIRECTORY',
  RESOURCE_BINARY = 'RESOURCE_BINARY',
  VALIDATION_FAILED = 'VALIDATION_FAILED',
  INVALID_ARCHIVE = 'INVALID_ARCHIVE',
  SKILLS_DISABLED = 'SKILLS_DISABLED',
  ROUTE_NOT_FOUND = 'ROUTE_NOT_FOUND',
  CHAT_NOT_FOUND = 'CHAT_NOT_FOUND',
  TOOLS_DISABLED = 'TOOLS_DISABLED',
  MCP_DISABLED = 'MCP_DISABLED',
  MCP_SESSION_NOT_FOUND = 'MCP_SESSION_NOT_FOUND',
  OAUTH_NOT_SUPPORTED = 'OAUTH_NOT_SUPPORTED',
  TOOL_NOT_FOUND = 'TOOL_NOT_FOUND',
  SCRIPTS_DISABLED = 'SCRIPTS_DISABLED',
  SCRIPT_NOT_ALLOWED = 'SCRIPT_NOT_ALLOWED',
  SCRIPTS_BUSY = 'SCRIPTS_BUSY',
  CODE_SKILL_FAILED = 'CODE_SKILL_FAILED',
  MODEL_NOT_CONFIGURED = 'MODEL_NOT_CONFIGURED',
  MODEL_ERROR = 'MODEL_ERROR',
  DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  USER_NOT_FOUND = 'USER_NOT_FOUND',
  USER_NAME_TAKEN = 'USER_NAME_TAKEN',
  LAST_ADMIN = 'LAST_ADMIN',
  API_KEY_NOT_FOUND = 'API_KEY_NOT_FOUND',
  QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  MISDIRECTED_REQUEST = 'MISDIRECTED_REQUEST',
  RATE_LIMITED = 'RATE_LIMITED',
  BUSY = 'BUSY',
  HEADERS_TOO_LARGE = 'HEADERS_TOO_LARGE',
  URI_TOO_LONG = 'URI_TOO_LONG',
  REQUEST_TIMEOUT = 'REQUEST_TIMEOUT',
  INTERNAL = 'INTERNAL',
}

/**
 * Marks an AppError across copies of this package: an app whose dependencies install @skillhost/core
 * twice has two AppError classes, and `instanceof` of one fails on the other's errors.
 */
const APP_ERROR_MARKER = Symbol.for('skillhost.AppError');

export class AppError extends Error {
  readonly [APP_ERROR_MARKER] = true;

  /** Whether `error` is an AppError of any copy of @skillhost/core (use this, not `instanceof`). */
  static isInstance(error: unknown): error is AppError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[APP_ERROR_MARKER] === true;
  }

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /**
     * Added to `details` for admins only: what may show the server's insides (a provider's own
     * words, an address). The message and `details` are for everyone, and are what gets stored.
     */
    readonly adminDetails?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export function assertUnreachable(value: never): never {
  throw new Error(`Unhandled case: ${String(value)}`);
}

/** The one code → HTTP status table; the switch is exhaustive, so a new code must be mapped. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.SKILL_NOT_FOUND:
    case ErrorCode.RESOURCE_NOT_FOUND:
    case ErrorCode.SKILL_VERSION_NOT_FOUND:
    case ErrorCode.SKILLS_DISABLED:
    case ErrorCode.ROUTE_NOT_FOUND:
    case ErrorCode.CHAT_NOT_FOUND:
    case ErrorCode.TOOL_NOT_FOUND:
    case ErrorCode.SCRIPTS_DISABLED:
    case ErrorCode.TOOLS_DISABLED:
    case ErrorCode.MCP_DISABLED:
    case ErrorCode.MCP_SESSION_NOT_FOUND:
    case ErrorCode.OAUTH_NOT_SUPPORTED:
    case ErrorCode.USER_NOT_FOUND:
    case ErrorCode.API_KEY_NOT_FOUND:
      return 404;
    case ErrorCode.UNAUTHENTICATED:
      return 401;
    case ErrorCode.FORBIDDEN:
    case ErrorCode.SCRIPT_NOT_ALLOWED:
    case ErrorCode.SKILL_DISABLED:
    case ErrorCode.SKILL_QUOTA_EXCEEDED:
      return 403;
    case ErrorCode.USER_NAME_TAKEN:
    case ErrorCode.LAST_ADMIN:
    case ErrorCode.SKILL_SWITCH_LOCKED:
      return 409;
    case ErrorCode.MODEL_ERROR:
      return 502;
    case ErrorCode.MODEL_NOT_CONFIGURED:
    case ErrorCode.DATABASE_UNAVAILABLE:
    case ErrorCode.BUSY:
    case ErrorCode.SCRIPTS_BUSY:
      return 503;
    case ErrorCode.RESOURCE_OUTSIDE_SKILL:
    case ErrorCode.RESOURCE_IS_DIRECTORY:
    case ErrorCode.VALIDATION_FAILED:
    case ErrorCode.INVALID_ARCHIVE:
    case ErrorCode.QUERY_TOO_COMPLEX:
      return 400;
    case ErrorCode.RESOURCE_BINARY:
    case ErrorCode.UNSUPPORTED_MEDIA_TYPE:
      return 415;
    case ErrorCode.MISDIRECTED_REQUEST:
      return 421;
    case ErrorCode.RATE_LIMITED:
      return 429;
    case ErrorCode.HEADERS_TOO_LARGE:
      return 431;
    case ErrorCode.URI_TOO_LONG:
      return 414;
    case ErrorCode.REQUEST_TIMEOUT:
      return 408;
    case ErrorCode.PAYLOAD_TOO_LARGE:
      return 413;
    case ErrorCode.CODE_SKILL_FAILED:
    case ErrorCode.INTERNAL:
      return 500;
    default:
      return assertUnreachable(code);
  }
}

export function skillsDisabledError(): AppError {
  return new AppError(ErrorCode.SKILLS_DISABLED, 'Skills are disabled on this server (app.skills.enabled = false).');
}

export function mcpDisabledError(): AppError {
  return new AppError(ErrorCode.MCP_DISABLED, 'Skills are not served over MCP on this server (app.mcp.enabled = false).');
}
