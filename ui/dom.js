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

  window.PersonaUi = Object.freeze({ keyStore, el, text });
})();
