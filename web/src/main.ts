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
  sending: false,
};

const CHAT_IN_URL = 'chat';

async function start(): Promise<void> {
  byId('sign-in-form').addEventListener('submit', (event) => void signIn(event));
  byId('sign-out').addEventListener('click', () => {
    storeKey(null);
    location.reload();
  });
  try {
    const me = await api<{ name: string; authMode: string }>('GET', '/v1/me');
    await open(me);
  } catch (error) {
    if (error instanceof ApiFailure && error.error.status === 401) return askForKey(storedKey() === null ? '' : 'That key was refused; try another.');
    showStatus(messageOf(error));
  }
}

function askForKey(problem: string): void {
  byId('sign-in-error').textContent = problem;
  const dialog = byId<HTMLDialogElement>('sign-in');
  if (!dialog.open) dialog.showModal();
  byId<HTMLInputElement>('api-key').focus();
}

async function signIn(event: Event): Promise<void> {
  event.preventDefault();
  const key = byId<HTMLInputElement>('api-key').value.trim();
  storeKey(key);
  try {
    const me = await api<{ name: string; authMode: string }>('GET', '/v1/me');
    byId<HTMLDialogElement>('sign-in').close();
    await open(me);
  } catch (error) {
    storeKey(null);
    askForKey(error instanceof ApiFailure && error.error.status === 401 ? 'That key was refused; try another.' : messageOf(error));
  }
}

async function open(me: { name: string; authMode: string }): Promise<void> {
  byId('who').textContent = me.authMode === 'none' ? `${me.name} (auth off)` : `Signed in as ${me.name}`;
  byId('sign-out').hidden = storedKey() === null;
  byId('app').hidden = false;
  byId('new-chat').addEventListener('click', () => void newChat());
  byId('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    void send();
  });
  // First the suggestions: Enter on an open list takes a suggestion and goes no further.
  attachSuggestions(byId('composer-input'), byId('suggestions'), () => state.suggestions);
  byId('composer-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.defaultPrevented) {
      event.preventDefault();
      void send();
    }
  });
  let searching: number | undefined;
  byId<HTMLInputElement>('skill-search').addEventListener('input', () => {
    clearTimeout(searching);
    searching = window.setTimeout(() => void searchSkills(), 200);
  });
  await Promise.all([loadModels(), loadSuggestions(), loadChats(), searchSkills()]);
  const wanted = new URLSearchParams(location.search).get(CHAT_IN_URL);
  if (wanted !== null) await openChat(wanted);
}

async function loadModels(): Promise<void> {
  const { models, defaultModel } = await api<{ models: { name: string; tools: boolean }[]; defaultModel: string | null }>('GET', '/v1/models');
  const select = byId<HTMLSelectElement>('model');
  select.replaceChildren(...models.map((model) => h('option', { value: model.name, selected: model.name === defaultModel, text: model.tools ? model.name : `${model.name} (no tools)` })));
  select.disabled = models.length === 0;
}

async function loadSuggestions(): Promise<void> {
  const [skills, commands] = await Promise.all([
    api<{ skills: { name: string; description: string }[] }>('GET', '/v1/skills'),
    api<{ commands: { name: string; description: string | null }[] }>('GET', '/v1/commands').catch(() => ({ commands: [] })),
  ]);
  state.suggestions = [
    ...commands.commands.map((command) => ({ name: command.name, description: command.description ?? '', kind: 'command' as const })),
    ...skills.skills.map((skill) => ({ name: skill.name, description: skill.description, kind: 'skill' as const })),
  ].sort((a, b) => a.name.localeCompare(b.name));
}

async function loadChats(): Promise<void> {
  const page = await api<Page<Chat>>('GET', '/v1/chats?limit=200');
  byId('chat-list').replaceChildren(
    ...page.items.map((chat) => {
      const openButton = h('button', { type: 'button', class: 'chat-open', 'aria-current': chat.id === state.chatId ? 'page' : undefined, text: chat.title ?? `Chat of ${when(chat.createdAt)}` });
      openButton.addEventListener('click', () => void openChat(chat.id));
      const remove = h('button', { type: 'button', class: 'chat-delete', 'aria-label': `Delete ${chat.title ?? 'this chat'}`, text: '×' });
      remove.addEventListener('click', () => void deleteChat(chat.id));
      return h('li', {}, openButton, remove);
    }),
  );
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
    const [chat, messages] = await Promise.all([api<Chat & { activatedSkills: Activation[] }>('GET', `/v1/chats/${encodeURIComponent(id)}`), api<Page<Message>>('GET', `/v1/chats/${encodeURIComponent(id)}/messages?limit=200`)]);
    state.chatId = chat.id;
    history.replaceState(null, '', `?${CHAT_IN_URL}=${encodeURIComponent(chat.id)}`);
    byId('chat-title').textContent = chat.title ?? 'Conversation';
    byId('messages').replaceChildren(...messages.items.map(renderMessage));
    renderActivated(chat.activatedSkills);
    await loadChats();
    scrollToEnd();
  } catch (error) {
    showStatus(messageOf(error));
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

async function send(): Promise<void> {
  const input = byId<HTMLTextAreaElement>('composer-input');
  const content = input.value.trim();
  if (content === '' || state.sending) return;
  if (state.chatId === null) await newChat();
  const chatId = state.chatId!;
  state.sending = true;
  byId<HTMLButtonElement>('send').disabled = true;
  input.value = '';
  const messages = byId('messages');
  messages.append(renderMessage({ id: 'pending-user', role: 'user', content, toolCards: null, createdAt: new Date().toISOString() }));
  const cards = h('div', { class: 'cards' });
  const answer = h('div', { class: 'content' });
  messages.append(h('li', { class: 'message message-assistant', 'aria-busy': 'true' }, h('p', { class: 'role', text: 'Assistant' }), cards, answer));
  showStatus('The assistant is answering…');
  const model = byId<HTMLSelectElement>('model').value;
  try {
    await streamTurn(chatId, { content, ...(model === '' ? {} : { model }) }, ({ event, data }) => {
      if (event === 'tool-call') cards.append(renderPendingCard(data as { id: string; tool: string; args: Record<string, unknown> }));
      else if (event === 'tool-result') {
        const card = data as ToolCard;
        const pending = cards.querySelector(`[data-call="${CSS.escape(card.id)}"]`);
        if (pending === null) cards.append(renderCard(card));
        else pending.replaceWith(renderCard(card));
      } else if (event === 'text-delta') answer.textContent += (data as { text: string }).text;
      else if (event === 'done') renderActivated((data as { activatedSkills: Activation[] }).activatedSkills);
      else if (event === 'error') showStatus(`The turn failed: ${(data as { message: string }).message}`);
      scrollToEnd();
    });
    answer.parentElement?.removeAttribute('aria-busy');
    if (!byId('status').textContent?.startsWith('The turn failed')) showStatus('');
    await loadChats();
  } catch (error) {
    showStatus(messageOf(error));
    input.value = content;
  } finally {
    state.sending = false;
    byId<HTMLButtonElement>('send').disabled = false;
  }
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
      button.addEventListener('click', () => void showSkill(skill.name));
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

void start();
