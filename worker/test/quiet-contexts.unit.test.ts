import { contextOfObjectId } from '../src/devtools/quiet-contexts';

/**
 * The one undocumented read of the quiet Runtime: the context a remote object's id names. The
 * stealth test (cdp-stealth.test.ts) shows the read right on today's Chromium (a client's
 * evaluate sees the page's own globals); this shows that another format reads as nothing.
 */
describe('contextOfObjectId', () => {
  test('reads the context of V8’s `<isolate>.<context>.<object>` ids', () => {
    expect(contextOfObjectId('-4993870065948250497.1.1')).toBe(1);
    expect(contextOfObjectId('4993870065948250497.27.310')).toBe(27);
  });

  test('anything else reads as null: the caller falls back to an isolated world', () => {
    expect(contextOfObjectId('{"injectedScriptId":3,"id":1}')).toBeNull();
    expect(contextOfObjectId('1.0.1')).toBeNull();
    expect(contextOfObjectId('')).toBeNull();
    expect(contextOfObjectId(null)).toBeNull();
  });
});
