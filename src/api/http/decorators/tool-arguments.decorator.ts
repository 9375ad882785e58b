import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/**
 * The JSON body of a tool call, as sent. It skips the DTO pipe on purpose: each tool checks its
 * arguments with its own schema (and its own rule for NUL), the same check the model's calls get.
 */
export const ToolArguments = createParamDecorator(
  (_data: unknown, context: ExecutionContext): unknown => context.switchToHttp().getRequest<{ body?: unknown }>().body,
);
