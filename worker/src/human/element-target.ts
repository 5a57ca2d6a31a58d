import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { inWorld } from '../browser/isolated-world';
import type { Geometry } from './geometry';
import { measure } from './geometry';

/**
 * An element a gesture aims at: a CSS selector, or a reference from the page's accessibility
 * snapshot (`n` and the element's backend node id, which stays the same for the life of its
 * document: a snapshot of a page that has navigated since names nothing).
 */
export type ElementTarget = string | { ref: string };

export const REF_PATTERN = /^n[1-9][0-9]{0,11}$/;

/** The target as errors quote it: `'#buy'` or `ref n42`. */
export const targetLabel = (t: ElementTarget): string =>
  typeof t === 'string' ? `'${t}'` : `ref ${t.ref}`;

/** In-page, called on the referenced element (or null): keeps it for the later measurements. */
const PIN = 'function () { globalThis.__pbTarget = this; }';
const UNPIN = 'globalThis.__pbTarget = null';

/**
 * Keeps the referenced element in the page's isolated world as measurements expect it: the
 * node is resolved into that world by the browser (no script runs in the page's own world).
 * A node that no longer exists leaves nothing kept, so the measurement reads "not found".
 */
async function pinRef(mp: ManagedPage, call: Call, ref: string): Promise<void> {
  const backendNodeId = Number(ref.slice(1));
  const send: Parameters<typeof inWorld>[1] = (command) => mp.cdp(call, command);
  await inWorld(
    mp,
    send,
    async (executionContextId) => {
      const resolved = await send((s) =>
        s.send('DOM.resolveNode', { backendNodeId, executionContextId }),
      ).catch(() => null);
      const objectId = resolved?.object.objectId;
      if (objectId === undefined) {
        await send((s) =>
          s.send('Runtime.evaluate', { expression: UNPIN, contextId: executionContextId }),
        );
        return;
      }
      try {
        await send((s) => s.send('Runtime.callFunctionOn', { objectId, functionDeclaration: PIN }));
      } finally {
        await send((s) => s.send('Runtime.releaseObject', { objectId })).catch(() => undefined);
      }
    },
    () => !call.signal.aborted,
  );
}

/** Finds the target and measures it (a selector the browser cannot parse is a 400). */
export async function measureTarget(
  mp: ManagedPage,
  call: Call,
  target: ElementTarget,
): Promise<Geometry> {
  if (typeof target === 'string') return measure(mp, call, target);
  await pinRef(mp, call, target.ref);
  return measure(mp, call, null);
}
