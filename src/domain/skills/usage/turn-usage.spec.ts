import { describe, expect, it } from '@jest/globals';
import type { StoredToolCard } from '@skillhost/core';
import { activationWay, type TurnUsage, turnUsageEvents } from './turn-usage.js';

function card(tool: string, skill: string | null, status: 'ok' | 'error' = 'ok'): StoredToolCard {
  return { id: tool, tool, args: {}, status, summary: { skill, truncated: false }, output: '', durationMs: 0 };
}

function turn(overrides: Partial<TurnUsage> = {}): TurnUsage {
  return {
    model: 'm',
    gateway: false,
    offered: [],
    activations: [],
    cards: [],
    versionOf: (skill) => (skill === 'pdf' ? 'sha256:p' : undefined),
    known: (skill) => skill === 'pdf' || skill === 'docx',
    ...overrides,
  };
}

describe(turnUsageEvents.name, () => {
  it('counts reads, script runs and failures of known skills; a made-up name counts nothing', () => {
    const events = turnUsageEvents(
      turn({
        cards: [
          card('skills.readResource', 'pdf'),
          card('skills.runScript', 'pdf', 'error'),
          card('skills.activate', 'made-up', 'error'),
          card('client.lookup', null),
        ],
      }),
    );
    expect(events.map((event) => [event.skill, event.counter, event.version])).toEqual([
      ['pdf', 'resourcesRead', 'sha256:p'],
      ['pdf', 'scriptsRun', 'sha256:p'],
      ['pdf', 'errors', 'sha256:p'],
      ['pdf', 'turns', 'sha256:p'],
    ]);
  });

  it('counts an activation at the version it was activated, and the turn once per skill', () => {
    const events = turnUsageEvents(
      turn({
        offered: ['docx', 'pdf'],
        activations: [{ skillName: 'pdf', how: 'tool', version: 'sha256:new' }],
        cards: [card('skills.activate', 'pdf'), card('skills.readResource', 'pdf')],
      }),
    );
    expect(events.map((event) => [event.skill, event.counter, event.version])).toEqual([
      ['docx', 'offered', undefined],
      ['pdf', 'offered', 'sha256:new'],
      ['pdf', 'activatedTool', 'sha256:new'],
      ['pdf', 'resourcesRead', 'sha256:new'],
      ['pdf', 'turns', 'sha256:new'],
    ]);
  });

  it("names each way: the gateway's turns as gateway, `/name` with or without tools as slash", () => {
    expect(activationWay('tool', false)).toBe('tool');
    expect(activationWay('explicit', false)).toBe('slash');
    expect(activationWay('fallback', false)).toBe('slash');
    expect(activationWay('command', false)).toBe('command');
    expect(activationWay('explicit', true)).toBe('gateway');
    expect(activationWay('tool', true)).toBe('gateway');
  });
});
