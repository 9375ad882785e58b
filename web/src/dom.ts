/** A small element builder: tag, attributes (and `text`), children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name === 'text') element.textContent = String(value);
    else element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined) element.append(child);
  return element;
}

export function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

export function when(iso: string): string {
  return new Date(iso).toLocaleString();
}

/**
 * A Copy button for the text `text()` gives. Browsers give pages the clipboard only over https or
 * on localhost: elsewhere the text in `shown` is selected for Ctrl+C, and the button says so.
 */
export function copyButton(text: () => string, shown: HTMLElement, label: string): HTMLButtonElement {
  const copy = h('button', { type: 'button', class: 'copy', 'aria-label': label, text: 'Copy' });
  copy.addEventListener('click', () => {
    const selectForCopy = () => {
      getSelection()?.selectAllChildren(shown);
      copy.textContent = 'Selected: press Ctrl+C (this browser keeps the clipboard from plain-http pages)';
    };
    if (navigator.clipboard === undefined) return selectForCopy();
    navigator.clipboard.writeText(text()).then(() => (copy.textContent = 'Copied'), selectForCopy);
  });
  return copy;
}
