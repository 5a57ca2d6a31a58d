// persona-browser panels: the message list under a panel's key card.
import { clock, el } from './dom.js';

/** How many messages a panel keeps, and how long those that are not errors stay. */
const MAX_MESSAGES = 8;
const OK_MESSAGE_MS = 8000;

/** @typedef {'ok' | 'info' | 'error'} MessageKind */

/**
 * `notify(kind, message, topic)` puts a message on top of the list; `notify.clear(topic)` takes
 * away the messages of a topic once they no longer hold (a wrong key's refusals once a key
 * works).
 * @typedef {((kind: MessageKind, message: string, topic?: string) => void) & {
 *   clear(topic: string): void,
 * }} Notify
 */

/**
 * The message list in `box`: the same message again (a polling loop) is counted instead of
 * stacked; at most MAX_MESSAGES are kept, and all but errors go after OK_MESSAGE_MS.
 * @param {HTMLElement} box
 * @returns {Notify}
 */
export function notifier(box) {
  /** @param {MessageKind} kind @param {string} message @param {string} [topic] */
  function notify(kind, message, topic) {
    const last = box.firstElementChild;
    if (
      last instanceof HTMLElement &&
      last.dataset.kind === kind &&
      last.dataset.text === message
    ) {
      const n = Number(last.dataset.count || '1') + 1;
      last.dataset.count = String(n);
      const count = last.querySelector('.msg-count');
      const time = last.querySelector('.msg-time');
      if (count) count.textContent = '×' + n;
      if (time) time.textContent = clock();
      return;
    }
    const close = el('button', { className: 'msg-close', attrs: { type: 'button' } }, '×');
    close.setAttribute('aria-label', 'Dismiss message');
    /** @type {Record<string, string>} */
    const data = { kind, text: message, count: '1' };
    if (topic) data.topic = topic;
    const item = el(
      'div',
      { className: 'msg msg-' + kind, data },
      el('span', { className: 'msg-time' }, clock()),
      el('span', { className: 'msg-text' }, message),
      el('span', { className: 'msg-count' }),
      close,
    );
    close.addEventListener('click', () => item.remove());
    box.prepend(item);
    while (box.children.length > MAX_MESSAGES) box.lastElementChild?.remove();
    if (kind !== 'error') setTimeout(() => item.remove(), OK_MESSAGE_MS);
  }
  /** @param {string} topic */
  function clear(topic) {
    for (const item of Array.from(box.children)) {
      if (item instanceof HTMLElement && item.dataset.topic === topic) item.remove();
    }
  }
  return Object.assign(notify, { clear });
}
