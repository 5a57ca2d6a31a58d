import type { Protocol } from 'puppeteer-core';
import type { Call } from './call';
import type { ManagedPage } from './managed-page';

type AXNode = Protocol.Accessibility.AXNode;

/** Lines a snapshot may have; the rest is cut and the answer says so. */
export const MAX_SNAPSHOT_LINES = 2000;
/** Characters of a name or value kept on a line. */
const MAX_TEXT = 200;

/** Roles that only group: shown through their children unless they carry a name. */
const GROUPING = new Set(['generic', 'none', 'presentation', 'LineBreak', 'Section', 'group']);
/** Properties worth an agent's attention, in the order they are shown. */
const SHOWN = [
  'focused',
  'checked',
  'pressed',
  'selected',
  'expanded',
  'disabled',
  'required',
  'readonly',
  'level',
];

export interface PageSnapshot {
  title: string;
  /** One line per element, indented by depth: `- role "name" [props] [ref=n42]`. */
  snapshot: string;
  /** How many lines carry a `ref`. */
  refs: number;
  truncated: boolean;
}

const text = (v: unknown): string => {
  const s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
};
const quoted = (s: string): string => JSON.stringify(s);

function props(node: AXNode): string {
  const out: string[] = [];
  for (const name of SHOWN) {
    const p = node.properties?.find((q) => q.name === name);
    const v: unknown = p?.value.value;
    if (v === undefined || v === false || v === 'false') continue;
    out.push(v === true || v === 'true' ? `[${name}]` : `[${name}=${text(v)}]`);
  }
  return out.length ? ` ${out.join(' ')}` : '';
}

/**
 * The main frame's accessibility tree as an agent reads it, each element with a reference the
 * primitives accept (`ref`). Read by the browser (`Accessibility.getFullAXTree`): no script runs
 * in the page, in its world or ours. Iframes show as one line; their content is not included.
 */
export async function readSnapshot(mp: ManagedPage, call: Call): Promise<PageSnapshot> {
  const { nodes } = await mp.cdp(call, (s) => s.send('Accessibility.getFullAXTree', {}));
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  const root = nodes.find((n) => n.parentId === undefined) ?? nodes[0];
  const lines: string[] = [];
  let refs = 0;
  let truncated = false;
  let title = '';

  const walk = (node: AXNode, depth: number, parentName: string): void => {
    if (lines.length >= MAX_SNAPSHOT_LINES) {
      truncated = true;
      return;
    }
    const role = text(node.role?.value);
    const name = text(node.name?.value);
    const children = (node.childIds ?? []).flatMap((id) => byId.get(id) ?? []);
    if (role === 'InlineTextBox') return;
    if (role === 'RootWebArea') title = name;
    const flatten = node.ignored || (GROUPING.has(role) && !name);
    if (flatten) {
      for (const c of children) walk(c, depth, parentName);
      return;
    }
    const pad = '  '.repeat(depth);
    if (role === 'StaticText') {
      if (name && name !== parentName) lines.push(`${pad}- text ${quoted(name)}`);
      return;
    }
    const value = text(node.value?.value);
    const ref = node.backendDOMNodeId !== undefined ? ` [ref=n${node.backendDOMNodeId}]` : '';
    if (ref) refs += 1;
    const shownRole = role === 'RootWebArea' ? 'document' : role;
    lines.push(
      `${pad}- ${shownRole}${name ? ` ${quoted(name)}` : ''}${value ? ` value=${quoted(value)}` : ''}` +
        `${props(node)}${ref}`,
    );
    for (const c of children) walk(c, depth + 1, name);
  };
  if (root) walk(root, 0, '');
  return { title, snapshot: lines.join('\n'), refs, truncated };
}
