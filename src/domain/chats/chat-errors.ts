import { AppError, ErrorCode } from '@skillhost/core';

/** Another user's chat is answered exactly as a missing one. */
export function chatNotFound(id: string): AppError {
  return new AppError(ErrorCode.CHAT_NOT_FOUND, `Chat '${id}' not found.`, { id });
}
