/**
 * Puppeteer keeps a few things the worker needs behind its private API. Every such read goes
 * through here, so that a puppeteer that moved one fails at once with an error naming it,
 * instead of the worker falling back quietly (a second session, Runtime left on).
 */

/** A private part of puppeteer-core that this version no longer has where the worker reads it. */
export class PuppeteerMoved extends Error {
  constructor(readonly access: string) {
    super(`puppeteer-core has no ${access} any more; the worker needs it (pin puppeteer-core 24)`);
  }
}

/** `owner[name]`, which must be a method: called on `owner` with no arguments. */
export function callPrivate(owner: object, name: string, access: string): unknown {
  const method: unknown = Reflect.get(owner, name);
  if (typeof method !== 'function') throw new PuppeteerMoved(access);
  return Reflect.apply(method, owner, []);
}

/** `owner[name]`, a field of the given primitive type. */
export function readPrivateString(owner: object, name: string, access: string): string {
  const value: unknown = Reflect.get(owner, name);
  if (typeof value !== 'string') throw new PuppeteerMoved(access);
  return value;
}

/** A symbol puppeteer keeps in one of its event namespaces without declaring it public. */
export function privateEvent(events: object, name: string, access: string): symbol {
  const event: unknown = Reflect.get(events, name);
  if (typeof event !== 'symbol') throw new PuppeteerMoved(access);
  return event;
}
