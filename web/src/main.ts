import { api, ApiFailure, storedKey, storeKey, streamTurn } from './api.js';
import { renderCard, renderPendingCard, type ToolCard } from './cards.js';
import { attachSuggestions, type Suggestion } from './composer.js';
import { byId, h, when } from './dom.js';

interface Chat {
  id: string;
  title: string | null;
  createdAt: string;
}

interface Activation {
  name: string;
  how: string;
  firstActivatedAt: string;
  lastActivatedAt: string;
  count: number;
  version: string | null;
}

interface Message {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  toolCards: ToolCard[] | null;
  createdAt: string;
}

interface Page<T> {
  items: T[];
  total: number;
}

const state = {
  chatId: null as string | null,
  suggestions: [] as Suggestion[],
  /** The prefixes this server reads as a skill invocation (`[app.skills] explicit_prefixes`). */
  prefixes: ['/'] as string[],
  sending: false,
  /** The chat of the address being opened: a message sent meanwhile waits for it and goes there. */
  opening: null as Promise<void> | null,
  /** Pages of the chat list shown (200 chats a page). */
  chatPages: 1,
};

const REFUSED = 'That key was refused; try another.';
/** The most recent messages a chat shows; older ones are counted, not shown. */
const SHOWN_MESSAGES = 200;

const CHAT_IN_URL = 'chat';

/** Wires the page once, then enters (or asks for a key). */
function start(): void {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void signIn();
  });
  // The page needs a key: Escape does not leave a blank page behind the dialog.
  byId('sign-in').addEventListener('cancel', (event) => event.preventDefault());
  byId('sign-out').addEventListener('click', () => {
    storeKey(null);
    location.replace(location.pathname);
  });
  byId('new-chat').addEventListener('click', guarded(newChat));
  byId('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded(send)();
  });
  // First the suggestions: Enter on an open list takes a suggestion and goes no further.
  attachSuggestions(byId('composer-input'), byId('suggestions'), () => state.suggestions, () => state.prefixes);
  byId('composer-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.defaultPrevented) {
      event.preventDefault();
      void guarded(send)();
    }
  });
  let searching: number | undefined;
  byId<HTMLInputElement>('skill-search').addEventListener('input', () => {
    clearTimeout(searching);
    searching = window.setTimeout(guarded(searchSkills), 200);
  });
  void enter();
}

/** Who the key (or no key, with auth off) is; then the page. A refused key asks for another. */
async function enter(): Promise<void> {
  const stored = storedKey();
  if (stored !== null && !isKeyShaped(stored)) {
    storeKey(null);
    return askForKey('');
  }
  let me: { name: string; authMode: string };
  try {
    me = await api<{ name: string; authMode: string }>('GET', '/v1/me');
  } catch (error) {
    if (isRefused(error)) return askForKey(storedKey() === null ? '' : REFUSED);
    return showStatus(messageOf(error));
  }
  byId<HTMLDialogElement>('sign-in').close();
  byId('who').textContent = me.authMode === 'none' ? `${me.name} (auth off)` : `Signed in as ${me.name}`;
  byId('sign-out').hidden = storedKey() === null;
  byId('app').hidden = false;
  // Each part on its own: one that fails (skills switched off on the server) says so and the rest works.
  await Promise.all([guarded(loadModels)(), guarded(loadSuggestions)(), guarded(loadChats)(), guarded(searchSkills)()]);
  const wanted = new URLSearchParams(location.search).get(CHAT_IN_URL);
  if (wanted !== null) {
    state.opening = guarded(() => openChat(wanted))();
    await state.opening;
    state.opening = null;
  }
}

function askForKey(problem: string): void {
  byId('sign-in-error').textContent = problem;
  const dialog = byId<HTMLDialogElement>('sign-in');
  if (!dialog.open) dialog.showModal();
  byId<HTMLInputElement>('api-key').focus();
}

async function signIn(): Promise<void> {
  const key = byId<HTMLInputElement>('api-key').value.trim();
  if (!isKeyShaped(key)) return askForKey('An API key is letters, digits and punctuation, without spaces; paste it again.');
  storeKey(key);
  try {
    await api('GET', '/v1/me');
  } catch (error) {
    storeKey(null);
    return askForKey(isRefused(error) ? REFUSED : messageOf(error));
  }
  await enter();
}

/**
 * An action of the page with its failures shown: a refused key (revoked meanwhile) asks for
 * another, anything else is said in the status line. Nothing fails silently.
 */
function guarded(action: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await action();
    } catch (error) {
      if (isRefused(error)) {
        storeKey(null);
        askForKey('Your key was refused (revoked or expired?); sign in again.');
      } else showStatus(messageOf(error));
    }
  };
}

/** A key an HTTP header can carry (printable ASCII): anything else never reaches the server. */
function isKeyShaped(key: string): boolean {
  return /^[\x21-\x7e]+$/.test(key);
}

function isRefused(error: unknown): boolean {
  return error instanceof ApiFailure && error.error.status === 401;
}

async function loadModels(): Promise<void> {
  const { models, defaultModel } = await api<{ models: { name: string; tools: boolean }[]; defaultModel: string | null }>('GET', '/v1/models');
  const select = byId<HTMLSelectElement>('model');
  select.replaceChildren(...models.map((model) => h('option', { value: model.name, selected: model.name === defaultModel, text: model.tools ? model.name : `${model.name} (no tools)` })));
  select.disabled = models.length === 0;
}

async function loadSuggestions(): Promise<void> {
  const [skills, commands] = await Promise.all([
    api<{ explicitPrefixes: string[]; skills: { name: string; description: string }[] }>('GET', '/v1/skills'),
    api<{ commands: { name: string; description: string | null }[] }>('GET', '/v1/commands').catch(() => ({ commands: [] })),
  ]);
  state.prefixes = skills.explicitPrefixes;
  state.suggestions = [
    ...commands.commands.map((command) => ({ name: command.name, description: command.description ?? '', kind: 'command' as const })),
    ...skills.skills.map((skill) => ({ name: skill.name, description: skill.description, kind: 'skill' as const })),
  ].sort((a, b) => a.name.localeCompare(b.name));
}

/** The newest chats, 200 a page, as many pages as asked for; "More chats" asks for another. */
async function loadChats(): Promise<void> {
  const chats: Chat[] = [];
  let total = 0;
  for (let pageIndex = 0; pageIndex < state.chatPages; pageIndex++) {
    const page = await api<Page<Chat>>('GET', `/v1/chats?limit=200&offset=${pageIndex * 200}`);
    chats.push(...page.items);
    total = page.total;
    if (chats.length >= total) break;
  }
  const items = chats.map((chat) => {
    const openButton = h('button', { type: 'button', class: 'chat-open', 'aria-current': chat.id === state.chatId ? 'page' : undefined, text: chat.title ?? `Chat of ${when(chat.createdAt)}` });
    openButton.addEventListener('click', guarded(() => openChat(chat.id)));
    const remove = h('button', { type: 'button', class: 'chat-delete', 'aria-label': `Delete ${chat.title ?? 'this chat'}`, text: '×' });
    remove.addEventListener('click', guarded(() => deleteChat(chat.id)));
    return h('li', {}, openButton, remove);
  });
  if (total > chats.length) {
    const more = h('button', { type: 'button', class: 'chat-more', text: `More chats (${total - chats.length} older)` });
    more.addEventListener('click', guarded(async () => {
      state.chatPages++;
      await loadChats();
    }));
    items.push(h('li', {}, more));
  }
  byId('chat-list').replaceChildren(...items);
}

async function newChat(): Promise<void> {
  const chat = await api<Chat>('POST', '/v1/chats', {});
  // A message sent while the chat opens goes to it, not to another new one.
  state.chatId = chat.id;
  await openChat(chat.id);
  byId('composer-input').focus();
}

async function deleteChat(id: string): Promise<void> {
  if (!confirm('Delete this chat, its messages and its activated skills?')) return;
  await api('DELETE', `/v1/chats/${encodeURIComponent(id)}`);
  if (state.chatId === id) {
    state.chatId = null;
    byId('messages').replaceChildren();
    byId('activated').replaceChildren();
    history.replaceState(null, '', location.pathname);
  }
  await loadChats();
}

async function openChat(id: string): Promise<void> {
  try {
    const path = `/v1/chats/${encodeURIComponent(id)}`;
    const [chat, first] = await Promise.all([api<Chat & { activatedSkills: Activation[] }>('GET', path), api<Page<Message>>('GET', `${path}/messages?limit=${SHOWN_MESSAGES}`)]);
    // The newest messages: the last page when the chat has more than a page.
    const older = Math.max(0, first.total - SHOWN_MESSAGES);
    const messages = older === 0 ? first : await api<Page<Message>>('GET', `${path}/messages?limit=${SHOWN_MESSAGES}&offset=${older}`);
    state.chatId = chat.id;
    history.replaceState(null, '', `?${CHAT_IN_URL}=${encodeURIComponent(chat.id)}`);
    byId('chat-title').textContent = chat.title ?? 'Conversation';
    const note = older === 0 ? [] : [h('li', { class: 'older', text: `${older} older message(s) not shown.` })];
    byId('messages').replaceChildren(...note, ...messages.items.map(renderMessage));
    renderActivated(chat.activatedSkills);
    await loadChats();
    scrollToEnd();
  } catch (error) {
    if (isRefused(error)) throw error;
    showStatus(`This chat cannot be opened: ${messageOf(error)}`);
  }
}

function renderMessage(message: Message): HTMLElement {
  const cards = (message.toolCards ?? []).map(renderCard);
  return h('li', { class: `message message-${message.role}` }, h('p', { class: 'role', text: message.role === 'user' ? 'You' : 'Assistant' }), cards.length > 0 ? h('div', { class: 'cards' }, ...cards) : null, h('div', { class: 'content', text: message.content }));
}

function renderActivated(activations: Activation[]): void {
  byId('activated').replaceChildren(
    ...(activations.length === 0
      ? [h('li', { class: 'empty', text: 'None yet.' })]
      : activations.map((activation) =>
          h(
            'li',
            { class: 'activation' },
            h('strong', { text: activation.name }),
            h('span', { text: ` ${activation.how}, ${activation.count}×` }),
            h('br'),
            h('small', { text: `last ${when(activation.lastActivatedAt)}${activation.version === null ? '' : ` · ${activation.version.slice(0, 19)}`}` }),
          ),
        )),
  );
}

/**
 * Sends the message and shows the turn as it streams. A turn that fails stores nothing on the
 * server, so it is taken off the page and the text goes back into the box, to be sent again.
 */
async function send(): Promise<void> {
  const input = byId<HTMLTextAreaElement>('composer-input');
  const content = input.value.trim();
  if (content === '' || state.sending) return;
  state.sending = true;
  byId<HTMLButtonElement>('send').disabled = true;
  const asked = renderMessage({ id: 'pending-user', role: 'user', content, toolCards: null, createdAt: new Date().toISOString() });
  const cards = h('div', { class: 'cards' });
  const answer = h('div', { class: 'content' });
  const answering = h('li', { class: 'message message-assistant', 'aria-busy': 'true' }, h('p', { class: 'role', text: 'Assistant' }), cards, answer);
  let failure: string | undefined;
  let refused: unknown;
  try {
    if (state.opening !== null) await state.opening;
    if (state.chatId === null) await newChat();
    const chatId = state.chatId!;
    input.value = '';
    byId('messages').append(asked, answering);
    showStatus('The assistant is answering…');
    const model = byId<HTMLSelectElement>('model').value;
    await streamTurn(chatId, { content, ...(model === '' ? {} : { model }) }, ({ event, data }) => {
      if (event === 'tool-call') cards.append(renderPendingCard(data as { id: string; tool: string; args: Record<string, unknown> }));
      else if (event === 'tool-result') {
        const card = data as ToolCard;
        const pending = cards.querySelector(`[data-call="${CSS.escape(card.id)}"]`);
        if (pending === null) cards.append(renderCard(card));
        else pending.replaceWith(renderCard(card));
      } else if (event === 'text-delta') answer.textContent += (data as { text: string }).text;
      else if (event === 'done' && state.chatId === chatId) renderActivated((data as { activatedSkills: Activation[] }).activatedSkills);
      else if (event === 'error') failure = (data as { message: string }).message;
      scrollToEnd();
    });
    if (failure === undefined) {
      answering.removeAttribute('aria-busy');
      showStatus('The assistant answered.');
      await loadChats();
    }
  } catch (error) {
    failure = messageOf(error);
    if (isRefused(error)) refused = error;
  } finally {
    state.sending = false;
    byId<HTMLButtonElement>('send').disabled = false;
  }
  if (failure !== undefined) {
    asked.remove();
    answering.remove();
    // Typed meanwhile: kept after the failed message, so neither is lost.
    input.value = input.value.trim() === '' ? content : `${content}\n${input.value}`;
    showStatus(`Not sent: ${failure} Your message is back in the box.`);
  }
  if (refused !== undefined) throw refused;
}

async function searchSkills(): Promise<void> {
  const query = byId<HTMLInputElement>('skill-search').value.trim();
  const skills =
    query === ''
      ? (await api<{ skills: { name: string; description: string }[] }>('GET', '/v1/skills')).skills
      : (await api<{ results: { name: string; description: string }[] }>('GET', `/v1/skills/search?q=${encodeURIComponent(query)}&limit=20`)).results;
  byId('skill-results').replaceChildren(
    ...skills.map((skill) => {
      const button = h('button', { type: 'button', class: 'skill-open' }, h('strong', { text: skill.name }), h('span', { text: ` ${skill.description}` }));
      button.addEventListener('click', guarded(() => showSkill(skill.name)));
      return h('li', {}, button);
    }),
  );
}

async function showSkill(name: string): Promise<void> {
  const path = `/v1/skills/${encodeURIComponent(name)}`;
  const [detail, body] = await Promise.all([api<{ name: string; description: string; resources: { files: { path: string; size: number }[] } }>('GET', path), api<{ body: string }>('GET', `${path}/body`)]);
  byId('skill-detail').replaceChildren(
    h('h3', { text: detail.name }),
    h('p', { text: detail.description }),
    h('h4', { text: 'Files' }),
    h('ul', { class: 'files' }, ...detail.resources.files.map((file) => h('li', { text: `${file.path} (${file.size} bytes)` }))),
    h('details', {}, h('summary', { text: 'Instructions (SKILL.md)' }), h('pre', { class: 'output', tabindex: '0', 'aria-label': `Instructions of ${detail.name}`, text: body.body })),
  );
}

function showStatus(message: string): void {
  byId('status').textContent = message;
}

function scrollToEnd(): void {
  const messages = byId('messages');
  messages.scrollTop = messages.scrollHeight;
}

function messageOf(error: unknown): string {
  return error instanceof ApiFailure ? `${error.error.code}: ${error.error.message}` : String(error);
}

start();
