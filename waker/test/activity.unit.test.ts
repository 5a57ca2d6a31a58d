import { Activity } from '../src/persona/activity';

describe('activity of a persona port', () => {
  test('idle_seconds is null while a request runs or a socket is open, and counts after', () => {
    const a = new Activity();
    const t0 = Date.now();
    expect(a.lastRequestIso()).toBeNull();
    a.requestStarted();
    a.socketOpened();
    expect(a.busy()).toBe(true);
    expect(a.idleSeconds(t0 + 10_000)).toBeNull();
    a.requestEnded();
    // The socket (a live view) still counts.
    expect(a.idleSeconds(t0 + 10_000)).toBeNull();
    a.socketClosed();
    const ended = Date.now();
    expect(a.idleSeconds(ended + 4_500)).toBe(4);
    expect(a.idleMs(ended + 4_500)).toBeGreaterThanOrEqual(4_500 - (Date.now() - ended));
    expect(a.lastRequestIso()).not.toBeNull();
  });

  test('more ends than starts never make it busy forever', () => {
    const a = new Activity();
    a.requestEnded();
    a.socketClosed();
    a.requestStarted();
    a.requestEnded();
    expect(a.busy()).toBe(false);
  });

  test("a page load's hold keeps it in use until it ends; the idle clock starts from there", () => {
    const a = new Activity();
    const t0 = Date.now();
    a.requestStarted();
    a.requestEnded();
    a.hold(10_000, t0);
    expect(a.busy(t0 + 9_999)).toBe(true);
    expect(a.idleSeconds(t0 + 9_999)).toBeNull();
    // A request that ends during the hold does not date the idle clock back.
    a.requestStarted();
    a.requestEnded();
    expect(a.busy(t0 + 10_000)).toBe(false);
    expect(a.idleSeconds(t0 + 10_000)).toBe(0);
    expect(a.idleSeconds(t0 + 13_500)).toBe(3);
    // A shorter hold never shortens a longer one.
    a.hold(1_000, t0);
    expect(a.busy(t0 + 5_000)).toBe(true);
  });
});
