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
export function attachSuggestions(input: HTMLTextAreaElement, list: HTMLUListElement, suggestions: () => Suggestion[], skillPrefixes: () => readonly string[]): void {
  let shown: Suggestion[] = [];
  let active = -1;

  const close = () => {
    list.hidden = true;
    list.replaceChildren();
    shown = [];
    active = -1;
    input.removeAttribute('aria-activedescendant');
  };

  /** The word being typed when it could invoke something: after a prefix, at the start or after other invocations. */
  const word = (): { prefix: string; start: number; query: string; first: boolean } | undefined => {
    const before = input.value.slice(0, input.selectionStart ?? input.value.length);
    const match = /(?:^|\s)([/$])([a-z0-9-]*)$/i.exec(before);
    if (match === null) return undefined;
    const prefix = match[1];
    if (prefix !== '/' && !skillPrefixes().includes(prefix)) return undefined;
    // Only invocations at the start of the message (one or more `/name ` in a row) invoke anything.
    const head = before.slice(0, before.length - match[0].length).trim();
    if (head !== '' && !/^(?:[/$][a-z0-9-]+\s+)*[/$][a-z0-9-]+$/i.test(head)) return undefined;
    return { prefix, start: before.length - match[2].length - 1, query: match[2].toLowerCase(), first: head === '' };
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
    const after = input.value.slice(input.selectionStart ?? input.value.length);
    input.value = `${input.value.slice(0, current.start)}${current.prefix}${chosen.name} ${after.trimStart()}`;
    const caret = current.start + chosen.name.length + 2;
    input.setSelectionRange(caret, caret);
    close();
    input.focus();
  };

  const update = () => {
    const current = word();
    if (current === undefined) return close();
    // A command runs only as `/name` opening the message; a skill by any prefix the server reads, also after another.
    const skillsToo = skillPrefixes().includes(current.prefix);
    shown = suggestions()
      .filter((item) => item.name.startsWith(current.query) && (item.kind === 'skill' ? skillsToo : current.prefix === '/' && current.first))
      .slice(0, 8);
    if (shown.length === 0) return close();
    list.replaceChildren(
      ...shown.map((item, index) => {
        const option = h('li', { id: `suggestion-${index}`, role: 'option', 'aria-selected': 'false' }, h('strong', { text: `${current.prefix}${item.name}` }), h('span', { class: 'kind', text: item.kind }), h('span', { class: 'description', text: item.description }));
        option.addEventListener('mousedown', (event) => {
          event.preventDefault();
          choose(index);
        });
        return option;
      }),
    );
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
