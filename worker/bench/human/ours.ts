import type { BenchWorker } from '../spawn';
import type { Driver } from './session';

/** Our side: every input goes through the worker's REST primitives, nothing else. */

/** A primitive the worker does not serve (yet): the report says so instead of a figure. */
export class EndpointMissing extends Error {}

/** Typing takes its time: a generous second per character on top of the base timeout. */
const CALL_TIMEOUT_MS = 60_000;
const timeoutFor = (body: Record<string, unknown>): number =>
  CALL_TIMEOUT_MS + (typeof body.text === 'string' ? body.text.length * 1000 : 0);

export function apiDriver(w: BenchWorker, pageId: string): Driver {
  const call = async (name: string, body: Record<string, unknown>): Promise<void> => {
    const route = `/api/v1/primitive/${encodeURIComponent(pageId)}/${name}`;
    const limitMs = timeoutFor(body);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${name} gave no answer in ${limitMs / 1000} s`)),
        limitMs,
      );
    });
    try {
      const r = await Promise.race([
        w.client.json<{ success?: boolean; error?: string }>('POST', route, body),
        timeout,
      ]);
      if (r.status === 404 && r.body.error?.startsWith('No route')) {
        throw new EndpointMissing(`n/a (endpoint missing: ${name})`);
      }
      if (r.status !== 200 || r.body.success !== true) {
        throw new Error(`${name} answered ${r.status}: ${r.body.error ?? JSON.stringify(r.body)}`);
      }
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    act: async (t) => {
      if (t.kind === 'hover') await call('hover-position', { x: t.x, y: t.y });
      else if (t.kind === 'click-position') await call('click-position', { x: t.x, y: t.y });
      else await call('click-element', { selector: '#target' });
    },
    type: async (selector, text) => {
      await call('click-element', { selector });
      await call('type-text', { text });
    },
    scroll: (distance) => call('scroll-page', { distance }),
  };
}
