// persona-browser panels: the small DOM helpers that the worker's control panel, its live view
// and the fleet panel share. A plain ES module served at /ui/dom.js, no build step. Strings
// reach the DOM as text nodes and attributes only, never through HTML parsing.

/**
 * @typedef {object} ElProps
 * @property {string} [className]
 * @property {string} [title]
 * @property {Record<string, string>} [data] `data-*` attributes, by their dataset name
 * @property {Record<string, string>} [attrs] any other attributes
 */

/** @typedef {Node | string | null | undefined} Child */

/**
 * Builds an element; strings among `children` become text nodes (never HTML).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {ElProps | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props, ...children) {
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

/**
 * The element with this id, of this kind: a page whose markup no longer matches its script
 * fails here, by name, instead of somewhere later on a null.
 * @template {typeof HTMLElement} T
 * @param {string} id
 * @param {T} [kind] the element's class (HTMLElement when left out)
 * @returns {InstanceType<T>}
 */
export function byId(id, kind) {
  const node = document.getElementById(id);
  const want = kind ?? HTMLElement;
  if (!(node instanceof want)) throw new Error('#' + id + ' is missing or not a ' + want.name);
  return /** @type {InstanceType<T>} */ (node);
}

/**
 * A value from the API as text: `''` for null and undefined, JSON for an object or array.
 * @param {unknown} v
 * @returns {string}
 */
export function text(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === null || v === undefined) return '';
  return JSON.stringify(v) ?? '';
}

/** The local time of day, for message stamps. */
export const clock = () => new Date().toLocaleTimeString();

/** @param {unknown} iso an ISO 8601 time @returns {string} it in local terms, else as given */
export function localTime(iso) {
  const d = new Date(text(iso));
  return isFinite(d.getTime()) ? d.toLocaleString() : text(iso);
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
export const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
