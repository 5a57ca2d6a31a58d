/* persona-browser panels: the small DOM and key helpers that the worker's control panel and the
   fleet panel share, as `window.PersonaUi`. Plain browser JS, no build step. */
(function () {
  'use strict';

  /**
   * The service key kept in a browser storage under `name`. `storage` is a function, because
   * merely touching a disabled storage throws: the key then lasts for this page only.
   */
  function keyStore(storage, name) {
    return {
      read() {
        try {
          return storage().getItem(name) || null;
        } catch {
          return null;
        }
      },
      write(key) {
        try {
          if (key) storage().setItem(name, key);
          else storage().removeItem(name);
        } catch {
          // Storage disabled: the key still works for this page.
        }
      },
    };
  }

  /** Builds an element; strings among `children` become text nodes (never HTML). */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      if (props.className) node.className = props.className;
      if (props.title) node.setAttribute('title', props.title);
      if (props.data) for (const [k, v] of Object.entries(props.data)) node.dataset[k] = v;
      if (props.attrs) for (const [k, v] of Object.entries(props.attrs)) node.setAttribute(k, v);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  const text = (v) => (v === null || v === undefined ? '' : String(v));
  const clock = () => new Date().toLocaleTimeString();

  /**
   * The message list of a panel: `notify(kind, message, topic)` puts a message on top of `box`;
   * the same message again (a polling loop) is counted instead of stacked; at most `max` are
   * kept, and all but errors go after `okMs`. `notify.clear(topic)` takes away the messages of
   * a topic once they no longer hold (the refusals of a wrong key, once a key works).
   */
  function notifier(box, max, okMs) {
    function notify(kind, message, topic) {
      const last = box.firstElementChild;
      if (last && last.dataset.kind === kind && last.dataset.text === message) {
        const n = Number(last.dataset.count || '1') + 1;
        last.dataset.count = String(n);
        last.querySelector('.msg-count').textContent = '×' + n;
        last.querySelector('.msg-time').textContent = clock();
        return;
      }
      const close = el('button', { className: 'msg-close', attrs: { type: 'button' } }, '×');
      close.setAttribute('aria-label', 'Dismiss message');
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
      while (box.children.length > max) box.lastElementChild.remove();
      if (kind !== 'error') setTimeout(() => item.remove(), okMs);
    }
    notify.clear = (topic) => {
      for (const item of Array.from(box.children)) {
        if (item.dataset.topic === topic) item.remove();
      }
    };
    return notify;
  }

  window.PersonaUi = Object.freeze({ keyStore, el, text, clock, notifier });
})();
