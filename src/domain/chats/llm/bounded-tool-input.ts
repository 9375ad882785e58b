import type { LanguageModelMiddleware } from 'ai';

/**
 * Tool input a model may send, nested at most this deep. The AI SDK parses a call's input and
 * later writes it back into the next request with JSON.stringify, which overflows the stack on
 * input nested a few thousand deep: one garbage call would fail the whole turn. No skill tool
 * takes input nested past 2 levels.
 */
export const MAX_TOOL_INPUT_DEPTH = 64;

/**
 * What the model's too-deep input is replaced with: a JSON string, so the tool answers with its usual argument error.
 */
export const TOO_DEEP_INPUT = JSON.stringify(
  `[arguments nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep; not read]`,
);

/** Replaces too-deep tool input in what the provider answered, before the SDK parses it. */
export const boundedToolInput: LanguageModelMiddleware = {
  specificationVersion: 'v3',
  wrapGenerate: async ({ doGenerate }) => {
    const result = await doGenerate();
    return {
      ...result,
      content: result.content.map((part) =>
        part.type === 'tool-call' ? { ...part, input: boundInput(part.input) } : part,
      ),
    };
  },
  wrapStream: async ({ doStream }) => {
    const { stream, ...rest } = await doStream();
    const bounded = stream.pipeThrough(
      new TransformStream({
        transform(part, controller) {
          controller.enqueue(part.type === 'tool-call' ? { ...part, input: boundInput(part.input) } : part);
        },
      }),
    );
    return { stream: bounded, ...rest };
  },
};

/** `input` as sent, or TOO_DEEP_INPUT when its JSON nests deeper than MAX_TOOL_INPUT_DEPTH. */
export function boundInput(input: string): string {
  return jsonDepth(input) > MAX_TOOL_INPUT_DEPTH ? TOO_DEEP_INPUT : input;
}

/** The deepest nesting of `[`/`{` in JSON text, outside strings; one pass, no parsing. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return deepest;
}
