import { describe, expect, it } from '@jest/globals';
import { boundInput, jsonDepth, MAX_TOOL_INPUT_DEPTH, TOO_DEEP_INPUT } from './bounded-tool-input.js';

describe(jsonDepth.name, () => {
  it('counts nesting outside strings only', () => {
    expect(jsonDepth('{}')).toBe(1);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[{{{"}')).toBe(1);
    expect(jsonDepth('{"a":"\\"[[["}')).toBe(1);
    expect(jsonDepth('not json')).toBe(0);
  });
});

describe(boundInput.name, () => {
  it('keeps input up to the bound and replaces deeper input with a JSON string saying why', () => {
    const at = `${'['.repeat(MAX_TOOL_INPUT_DEPTH)}${']'.repeat(MAX_TOOL_INPUT_DEPTH)}`;
    expect(boundInput(at)).toBe(at);
    expect(boundInput(`{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`)).toBe(TOO_DEEP_INPUT);
    expect(JSON.parse(TOO_DEEP_INPUT)).toBe('[arguments nested more than 64 levels deep; not read]');
  });
});
