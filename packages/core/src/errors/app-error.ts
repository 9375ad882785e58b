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
  SKILL_MIRROR_NOT_FOUND = 'SKILL_MIRROR_NOT_FOUND',
  SKILL_MIRROR_NAME_TAKEN = 'SKILL_MIRROR_NAME_TAKEN',
  SKILL_MIRROR_CONFIGURED = 'SKILL_MIRROR_CONFIGURED',
  RESOURCE_NOT_FOUND = 'RESOURCE_NOT_FOUND',
  RESOURCE_OUTSIDE_SKILL = 'RESOURCE_OUTSIDE_SKILL',
  RESOURCE_IS_DIRECTORY = 'RESOURCE_IS_DIRECTORY',
  RESOURCE_BINARY = 'RESOURCE_BINARY',
  VALIDATION_FAILED = 'VALIDATION_FAILED',
  INVALID_ARCHIVE = 'INVALID_ARCHIVE',
  IMPORT_SOURCE_UNREACHABLE = 'IMPORT_SOURCE_UNREACHABLE',
  IMPORT_VERIFICATION_FAILED = 'IMPORT_VERIFICATION_FAILED',
  IMPORT_SOURCE_FORBIDDEN = 'IMPORT_SOURCE_FORBIDDEN',
  IMPORT_TOO_LARGE = 'IMPORT_TOO_LARGE',
  IMPORT_BUSY = 'IMPORT_BUSY',
  EVAL_REGRESSION = 'EVAL_REGRESSION',
  EVAL_CASE_NOT_FOUND = 'EVAL_CASE_NOT_FOUND',
  SKILLS_DISABLED = 'SKILLS_DISABLED',
  ROUTE_NOT_FOUND = 'ROUTE_NOT_FOUND',
  CHAT_NOT_FOUND = 'CHAT_NOT_FOUND',
  TOOLS_DISABLED = 'TOOLS_DISABLED',
  MCP_DISABLED = 'MCP_DISABLED',
  MCP_SESSION_NOT_FOUND = 'MCP_SESSION_NOT_FOUND',
  GATEWAY_DISABLED = 'GATEWAY_DISABLED',
  CONVERSATION_NOT_FOUND = 'CONVERSATION_NOT_FOUND',
  RESPONSE_NOT_FOUND = 'RESPONSE_NOT_FOUND',
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
  GROUP_NOT_FOUND = 'GROUP_NOT_FOUND',
  GROUP_NAME_TAKEN = 'GROUP_NAME_TAKEN',
  GROUP_MANAGED_BY_PROVIDER = 'GROUP_MANAGED_BY_PROVIDER',
  API_KEY_NOT_FOUND = 'API_KEY_NOT_FOUND',
  CSRF_TOKEN_MISSING = 'CSRF_TOKEN_MISSING',
  SIGN_IN_NOT_CONFIGURED = 'SIGN_IN_NOT_CONFIGURED',
  SIGN_IN_RETURN_TO_INVALID = 'SIGN_IN_RETURN_TO_INVALID',
  SIGN_IN_STATE_INVALID = 'SIGN_IN_STATE_INVALID',
  SIGN_IN_FAILED = 'SIGN_IN_FAILED',
  SIGN_IN_CLAIMS_INVALID = 'SIGN_IN_CLAIMS_INVALID',
  SIGN_IN_NOT_ALLOWED = 'SIGN_IN_NOT_ALLOWED',
  SIGN_IN_USER_CONFLICT = 'SIGN_IN_USER_CONFLICT',
  SIGN_IN_PROVIDER_UNAVAILABLE = 'SIGN_IN_PROVIDER_UNAVAILABLE',
  OAUTH_GRANT_NOT_FOUND = 'OAUTH_GRANT_NOT_FOUND',
  INSUFFICIENT_SCOPE = 'INSUFFICIENT_SCOPE',
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

/** The one code → HTTP status table; a `Record` over every code, so a new code must be mapped. */
const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.SKILL_NOT_FOUND]: 404,
  [ErrorCode.SKILL_DISABLED]: 403,
  [ErrorCode.SKILL_VERSION_NOT_FOUND]: 404,
  [ErrorCode.SKILL_SWITCH_LOCKED]: 409,
  [ErrorCode.SKILL_QUOTA_EXCEEDED]: 403,
  [ErrorCode.SKILL_MIRROR_NOT_FOUND]: 404,
  [ErrorCode.SKILL_MIRROR_NAME_TAKEN]: 409,
  [ErrorCode.SKILL_MIRROR_CONFIGURED]: 409,
  [ErrorCode.RESOURCE_NOT_FOUND]: 404,
  [ErrorCode.RESOURCE_OUTSIDE_SKILL]: 400,
  [ErrorCode.RESOURCE_IS_DIRECTORY]: 400,
  [ErrorCode.RESOURCE_BINARY]: 415,
  [ErrorCode.VALIDATION_FAILED]: 400,
  [ErrorCode.INVALID_ARCHIVE]: 400,
  [ErrorCode.IMPORT_SOURCE_UNREACHABLE]: 422,
  [ErrorCode.IMPORT_VERIFICATION_FAILED]: 422,
  [ErrorCode.IMPORT_SOURCE_FORBIDDEN]: 422,
  [ErrorCode.IMPORT_TOO_LARGE]: 422,
  [ErrorCode.EVAL_REGRESSION]: 422,
  [ErrorCode.EVAL_CASE_NOT_FOUND]: 404,
  [ErrorCode.IMPORT_BUSY]: 503,
  [ErrorCode.SKILLS_DISABLED]: 404,
  [ErrorCode.ROUTE_NOT_FOUND]: 404,
  [ErrorCode.CHAT_NOT_FOUND]: 404,
  [ErrorCode.TOOLS_DISABLED]: 404,
  [ErrorCode.MCP_DISABLED]: 404,
  [ErrorCode.MCP_SESSION_NOT_FOUND]: 404,
  [ErrorCode.GATEWAY_DISABLED]: 404,
  [ErrorCode.CONVERSATION_NOT_FOUND]: 404,
  [ErrorCode.RESPONSE_NOT_FOUND]: 404,
  [ErrorCode.OAUTH_NOT_SUPPORTED]: 404,
  [ErrorCode.TOOL_NOT_FOUND]: 404,
  [ErrorCode.SCRIPTS_DISABLED]: 404,
  [ErrorCode.SCRIPT_NOT_ALLOWED]: 403,
  [ErrorCode.SCRIPTS_BUSY]: 503,
  [ErrorCode.CODE_SKILL_FAILED]: 500,
  [ErrorCode.MODEL_NOT_CONFIGURED]: 503,
  [ErrorCode.MODEL_ERROR]: 502,
  [ErrorCode.DATABASE_UNAVAILABLE]: 503,
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.USER_NOT_FOUND]: 404,
  [ErrorCode.USER_NAME_TAKEN]: 409,
  [ErrorCode.LAST_ADMIN]: 409,
  [ErrorCode.GROUP_NOT_FOUND]: 404,
  [ErrorCode.GROUP_NAME_TAKEN]: 409,
  [ErrorCode.GROUP_MANAGED_BY_PROVIDER]: 409,
  [ErrorCode.API_KEY_NOT_FOUND]: 404,
  [ErrorCode.CSRF_TOKEN_MISSING]: 403,
  [ErrorCode.SIGN_IN_NOT_CONFIGURED]: 404,
  [ErrorCode.SIGN_IN_RETURN_TO_INVALID]: 400,
  [ErrorCode.SIGN_IN_STATE_INVALID]: 400,
  [ErrorCode.SIGN_IN_FAILED]: 400,
  [ErrorCode.SIGN_IN_CLAIMS_INVALID]: 400,
  [ErrorCode.SIGN_IN_NOT_ALLOWED]: 403,
  [ErrorCode.SIGN_IN_USER_CONFLICT]: 409,
  [ErrorCode.SIGN_IN_PROVIDER_UNAVAILABLE]: 502,
  [ErrorCode.OAUTH_GRANT_NOT_FOUND]: 404,
  [ErrorCode.INSUFFICIENT_SCOPE]: 403,
  [ErrorCode.QUERY_TOO_COMPLEX]: 400,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCode.MISDIRECTED_REQUEST]: 421,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.BUSY]: 503,
  [ErrorCode.HEADERS_TOO_LARGE]: 431,
  [ErrorCode.URI_TOO_LONG]: 414,
  [ErrorCode.REQUEST_TIMEOUT]: 408,
  [ErrorCode.INTERNAL]: 500,
};

export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code];
}

export function skillsDisabledError(): AppError {
  return new AppError(ErrorCode.SKILLS_DISABLED, 'Skills are disabled on this server (app.skills.enabled = false).');
}

export function mcpDisabledError(): AppError {
  return new AppError(
    ErrorCode.MCP_DISABLED,
    'Skills are not served over MCP on this server (app.mcp.enabled = false).',
  );
}
