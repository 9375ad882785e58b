import type { ActivationHow, CatalogueSnapshot, StoredToolCard } from '@skillhost/core';
import { type ActivationWay, activationCounter, type UsageEvent } from './skill-usage.js';

/** Tools whose calls read one of a skill's files (the chat's and MCP's names). */
const RESOURCE_TOOLS: ReadonlySet<string> = new Set(['skills.readResource', 'read_skill_file']);
const SCRIPT_TOOLS: ReadonlySet<string> = new Set(['skills.runScript']);

/** What one answered turn did with skills, as the turn runner knows it at its end. */
export interface TurnUsage extends CallerSkills {
  /** The model that answered. */
  model: string;
  /** A turn of the OpenAI-compatible gateway: its activations count as `gateway`, whatever asked for them. */
  gateway: boolean;
  /** The skills the turn's catalogue listed. */
  offered: readonly string[];
  /** Its activations, a code skill's own calls' included (as `tool`). */
  activations: readonly { skillName: string; how: ActivationHow; version?: string }[];
  /** Every tool call of the turn (the server's, the model's, and code skills' inner ones). */
  cards: readonly StoredToolCard[];
}

/** How an activation counts: the gateway's turns as `gateway`; a `/name` (with tools or without) as `slash`. */
export function activationWay(how: ActivationHow, gateway: boolean): ActivationWay {
  if (gateway) return 'gateway';
  return how === 'tool' ? 'tool' : how === 'command' ? 'command' : 'slash';
}

/**
 * The funnel's events for one turn: each listed skill offered once; each activation by its way; each read, script
 * and failed call of a known skill; and one `turns` for every skill the turn activated, read or ran.
 */
export function turnUsageEvents(turn: TurnUsage): UsageEvent[] {
  const { model } = turn;
  // The version a skill was activated at this turn is the one its reads come from.
  const activatedAt = new Map<string, string | undefined>();
  for (const activation of turn.activations) activatedAt.set(activation.skillName, activation.version);
  const versionOf = (skill: string) =>
    activatedAt.size > 0 && activatedAt.has(skill) ? activatedAt.get(skill) : turn.versionOf(skill);
  // Literal objects, no spreads: a turn's catalogue may list a hundred skills, and this runs at every turn's end.
  const events: UsageEvent[] = [];
  for (const skill of turn.offered) events.push({ skill, model, version: versionOf(skill), counter: 'offered' });
  const used = new Set<string>();
  for (const { skillName: skill, how } of turn.activations) {
    used.add(skill);
    const counter = activationCounter(activationWay(how, turn.gateway));
    events.push({ skill, model, version: versionOf(skill), counter });
  }
  for (const card of turn.cards) {
    const skill = card.summary.skill;
    if (skill === null || !turn.known(skill)) continue;
    events.push(...cardEvents(card, { skill, model, version: versionOf(skill) }));
    if (card.status === 'ok') used.add(skill);
  }
  for (const skill of used) events.push({ skill, model, version: versionOf(skill), counter: 'turns' });
  return events;
}

/** One tool call as the tool executor answers it: its card, and the skill it activated (at which version). */
export interface CallOutcome {
  card: StoredToolCard;
  activated?: string;
  version?: string;
}

/** The caller's catalogue as a call outside a turn sees it. */
export interface CallerSkills {
  /** Whether the caller's catalogue has the skill: a name a client made up never becomes a row. */
  known(skill: string): boolean;
  /** The version a read of the skill comes from (the chat's pin, else the catalogue's), or undefined. */
  versionOf(skill: string): string | undefined;
}

/** A catalogue's skills, read at a chat's pinned versions when there is a chat, else at the catalogue's. */
export function callerSkills(view: CatalogueSnapshot, pins?: ReadonlyMap<string, string>): CallerSkills {
  return {
    known: (skill) => view.skills.has(skill),
    versionOf: (skill) => pins?.get(skill) ?? view.skills.get(skill)?.digest,
  };
}

/**
 * A tool call outside a turn (MCP's tools, a chat's tool routes, a code skill's calls under them) in the funnel: its
 * activation by the door's `way`, then its read, run or failure. No model answered it, and it is no turn.
 */
export function callUsageEvents(call: CallOutcome, way: ActivationWay, caller: CallerSkills): UsageEvent[] {
  const skill = call.card.summary.skill;
  if (skill === null || !caller.known(skill)) return [];
  const at = { skill, version: call.version ?? caller.versionOf(skill) };
  const events = cardEvents(call.card, at);
  if (call.activated !== undefined) events.push({ ...at, counter: activationCounter(way) });
  return events;
}

/** A tool call's events: a read or a script run (tried, whatever its outcome), and an error when it failed. */
export function cardEvents(card: StoredToolCard, at: Omit<UsageEvent, 'counter'>): UsageEvent[] {
  const events: UsageEvent[] = [];
  if (RESOURCE_TOOLS.has(card.tool)) events.push({ ...at, counter: 'resourcesRead' });
  if (SCRIPT_TOOLS.has(card.tool)) events.push({ ...at, counter: 'scriptsRun' });
  if (card.status === 'error') events.push({ ...at, counter: 'errors' });
  return events;
}
