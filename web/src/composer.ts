import { h } from './dom.js';

export interface Suggestion {
  name: string;
  description: string;
  kind: 'skill' | 'command';
}

/**
 * The message box: typing a prefix the server reads (`/`, and `$` when it is configured) at the
 * start (or after another `/name `) suggests skills, and `/` at the very start commands, whose name
 * starts with what follows; arrows move, Enter or Tab takes one, Escape closes.
 * The text box points at the listbox (`aria-controls`, `aria-activedescendant`), so screen readers
 * announce the highlighted choice.
 */
export function attachSuggestions(
  input: HTMLTextAreaElement,
  list: HTMLUListElement,
  suggestions: () => Suggestion[],
  skillPrefixes: () => readonly string[],
): void {
  let shown: Suggestion[] = [];
  let active = -1;
  const caret = () => input.selectionStart ?? input.value.length;
  const word = () => invocationWord(input.value.slice(0, caret()), skillPrefixes());

  const close = () => {
    list.hidden = true;
    list.replaceChildren();
    shown = [];
    active = -1;
    input.removeAttribute('aria-activedescendant');
  };

  const highlight = (index: number) => {
    active = index;
    for (const [i, item] of [...list.children].entries()) item.setAttribute('aria-selected', String(i === index));
    if (index >= 0) input.setAttribute('aria-activedescendant', `suggestion-${index}`);
  };

  const choose = (index: number) => {
    const current = word();
    const chosen = shown[index];
    if (current === undefined || chosen === undefined) return close();
    const after = input.value.slice(caret());
    input.value = `${input.value.slice(0, current.start)}${current.prefix}${chosen.name} ${after.trimStart()}`;
    const end = current.start + chosen.name.length + 2;
    input.setSelectionRange(end, end);
    close();
    input.focus();
  };

  const update = () => {
    const current = word();
    if (current === undefined) return close();
    shown = suggestionsFor(current, suggestions(), skillPrefixes());
    if (shown.length === 0) return close();
    list.replaceChildren(...shown.map((item, index) => optionOf(item, index, current.prefix, () => choose(index))));
    list.hidden = false;
    highlight(0);
  };

  input.addEventListener('input', update);
  input.addEventListener('blur', () => setTimeout(close, 100));
  input.addEventListener('keydown', (event) => {
    if (list.hidden) return;
    if (event.key === 'ArrowDown') highlight((active + 1) % shown.length);
    else if (event.key === 'ArrowUp') highlight((active - 1 + shown.length) % shown.length);
    else if (event.key === 'Enter' || event.key === 'Tab') choose(active);
    else if (event.key === 'Escape') close();
    else return;
    event.preventDefault();
    event.stopImmediatePropagation();
  });
}

/** The word being typed, when it could invoke something. */
interface InvocationWord {
  prefix: string;
  /** Where its prefix is in the message. */
  start: number;
  /** What follows the prefix, lower case. */
  query: string;
  /** Whether it opens the message (where a command may be). */
  first: boolean;
}

/**
 * The word typed just before the caret when it could invoke something: after a prefix, at the start or after other
 * invocations.
 */
function invocationWord(before: string, skillPrefixes: readonly string[]): InvocationWord | undefined {
  const match = /(?:^|\s)([/$])([a-z0-9-]*)$/i.exec(before);
  if (match === null) return undefined;
  const prefix = match[1];
  if (prefix !== '/' && !skillPrefixes.includes(prefix)) return undefined;
  // Only invocations at the start of the message (one or more `/name ` in a row) invoke anything.
  const head = before.slice(0, before.length - match[0].length).trim();
  if (head !== '' && !/^(?:[/$][a-z0-9-]+\s+)*[/$][a-z0-9-]+$/i.test(head)) return undefined;
  return { prefix, start: before.length - match[2].length - 1, query: match[2].toLowerCase(), first: head === '' };
}

/**
 * The first eight suggestions whose name starts with the word's query and that the word's prefix and place can invoke.
 */
function suggestionsFor(current: InvocationWord, all: Suggestion[], skillPrefixes: readonly string[]): Suggestion[] {
  // A command runs only as `/name` opening the message; a skill by any prefix the server reads, also after another.
  const skillsToo = skillPrefixes.includes(current.prefix);
  return all
    .filter(
      (item) =>
        item.name.startsWith(current.query) &&
        (item.kind === 'skill' ? skillsToo : current.prefix === '/' && current.first),
    )
    .slice(0, 8);
}

/** One suggestion of the listbox; a press on it chooses it (before the text box loses focus). */
function optionOf(item: Suggestion, index: number, prefix: string, choose: () => void): HTMLLIElement {
  const option = h(
    'li',
    { id: `suggestion-${index}`, role: 'option', 'aria-selected': 'false' },
    h('strong', { text: `${prefix}${item.name}` }),
    h('span', { class: 'kind', text: item.kind }),
    h('span', { class: 'description', text: item.description }),
  );
  option.addEventListener('mousedown', (event) => {
    event.preventDefault();
    choose();
  });
  return option;
}
