import crypto from 'node:crypto';
import { contentDisposition, safeContentType, safeFilename } from '../src/media/headers';
import { MediaCapExceeded, MediaStore } from '../src/media/store';

/** The store with test-sized limits, through the constructor main.ts uses. */
const TTL_MS = 200;
const CAP = 1000;
const stores: MediaStore[] = [];
function newStore(opts: { ttlMs?: number; capBytes?: number } = {}): MediaStore {
  const store = new MediaStore({ ttlMs: opts.ttlMs ?? TTL_MS, capBytes: opts.capBytes ?? CAP });
  stores.push(store);
  return store;
}

/** Holds the event loop (no timer can run) until `ms` have passed on the monotonic clock. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* busy */
  }
}

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  jest.useRealTimers();
  jest.restoreAllMocks();
});

describe('put and take', () => {
  test('round trip gives back the exact bytes, name and type, then the link is dead', () => {
    const store = newStore();
    const bytes = crypto.randomBytes(300);
    const link = store.put(bytes, 'report.pdf', 'application/pdf');
    expect(link.media_url).toBe(`/api/v1/media/${link.token}`);
    expect(store.stats()).toEqual({ files: 1, bytes: 300, capBytes: CAP });

    const item = store.take(link.token);
    expect(item).not.toBeNull();
    expect(Buffer.compare(item!.bytes, bytes)).toBe(0);
    expect(item!.filename).toBe('report.pdf');
    expect(item!.contentType).toBe('application/pdf');

    expect(store.take(link.token)).toBeNull();
    expect(store.stats()).toEqual({ files: 0, bytes: 0, capBytes: CAP });
  });

  test('an unknown token gives null and disturbs nothing', () => {
    const store = newStore();
    const link = store.put(Buffer.from('x'), 'a.txt', 'text/plain');
    expect(store.take('nope')).toBeNull();
    expect(store.take('')).toBeNull();
    expect(store.take(link.token.slice(0, -1))).toBeNull();
    expect(store.stats().files).toBe(1);
  });

  test('peek shows a file without claiming it', () => {
    const store = newStore();
    const link = store.put(Buffer.from('abc'), 'a.txt', 'text/plain');
    expect(store.peek(link.token)?.bytes.toString()).toBe('abc');
    expect(store.take(link.token)?.bytes.toString()).toBe('abc');
    expect(store.peek(link.token)).toBeNull();
  });

  test('concurrent takes of one token: exactly one gets the file', async () => {
    const store = newStore();
    const links = Array.from({ length: 5 }, (_, i) =>
      store.put(Buffer.from(`file ${i}`), `${i}.txt`, 'text/plain'),
    );
    const attempts = links.flatMap((l) =>
      Array.from({ length: 4 }, () => Promise.resolve().then(() => store.take(l.token))),
    );
    const got = await Promise.all(attempts);
    const served = got.filter((g) => g !== null).map((g) => g.bytes.toString());
    expect(served.sort()).toEqual(['file 0', 'file 1', 'file 2', 'file 3', 'file 4']);
    expect(store.stats()).toMatchObject({ files: 0, bytes: 0 });
  });
});

describe('tokens', () => {
  test('carry at least 128 random bits in base64url, and never repeat', () => {
    // 1000 one-byte files fill the 1000-byte cap exactly: a put up to the cap fits.
    const store = newStore();
    const tokens = Array.from({ length: CAP }, () => store.put(Buffer.from([1]), 'b', 'x/y').token);
    expect(store.stats()).toMatchObject({ files: CAP, bytes: CAP });
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const t of tokens) {
      expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(t, 'base64url').length).toBeGreaterThanOrEqual(16);
    }
    // All 64 symbols show up across the tokens: random bytes, not a counter or hex.
    const symbols = new Set(tokens.join(''));
    expect(symbols.size).toBe(64);
  });
});

describe('expiry', () => {
  test('an unclaimed file is dropped ttl after it was stored, and its bytes released', () => {
    jest.useFakeTimers();
    const store = newStore();
    const early = store.put(Buffer.alloc(400), 'early.bin', 'application/octet-stream');
    jest.advanceTimersByTime(TTL_MS / 2);
    const late = store.put(Buffer.alloc(500), 'late.bin', 'application/octet-stream');
    expect(store.stats()).toMatchObject({ files: 2, bytes: 900 });

    jest.advanceTimersByTime(TTL_MS / 2 - 1);
    expect(store.stats()).toMatchObject({ files: 2, bytes: 900 });
    expect(store.peek(early.token)).not.toBeNull();

    jest.advanceTimersByTime(1);
    expect(store.stats()).toMatchObject({ files: 1, bytes: 500 });
    expect(store.take(early.token)).toBeNull();
    expect(store.peek(late.token)).not.toBeNull();

    jest.advanceTimersByTime(TTL_MS / 2);
    expect(store.stats()).toMatchObject({ files: 0, bytes: 0 });
    expect(store.take(late.token)).toBeNull();
    // Nothing left behind: no timer waits for files that are gone.
    expect(jest.getTimerCount()).toBe(0);
  });

  test('a download clears the file timer; close clears them all', () => {
    jest.useFakeTimers();
    const store = newStore();
    const a = store.put(Buffer.alloc(10), 'a', 'x/y');
    store.put(Buffer.alloc(10), 'b', 'x/y');
    store.put(Buffer.alloc(10), 'c', 'x/y');
    expect(jest.getTimerCount()).toBe(3);
    store.take(a.token);
    expect(jest.getTimerCount()).toBe(2);
    store.close();
    expect(jest.getTimerCount()).toBe(0);
    expect(store.stats()).toMatchObject({ files: 0, bytes: 0 });
  });

  test('expiry timers do not keep the process alive', () => {
    const spy = jest.spyOn(global, 'setTimeout');
    const store = newStore({ ttlMs: 60_000 });
    store.put(Buffer.alloc(1), 'a', 'x/y');
    const timer = spy.mock.results.at(-1)?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
  });

  test('an overdue file is gone even when its timer could not run yet (busy event loop)', () => {
    const store = newStore({ ttlMs: 50 });
    const link = store.put(Buffer.alloc(10), 'a', 'x/y');
    blockFor(80);
    expect(store.take(link.token)).toBeNull();
    expect(store.stats()).toMatchObject({ files: 0, bytes: 0 });
  });

  test('a ttl longer than one setTimeout can wait is waited out, not cut short', () => {
    jest.useFakeTimers();
    const day = 24 * 3600 * 1000;
    const store = newStore({ ttlMs: 30 * day });
    const link = store.put(Buffer.alloc(1), 'a', 'x/y');
    jest.advanceTimersByTime(25 * day);
    expect(store.peek(link.token)).not.toBeNull();
    jest.advanceTimersByTime(5 * day);
    expect(store.peek(link.token)).toBeNull();
    expect(store.stats().bytes).toBe(0);
  });
});

describe('cap on unclaimed bytes', () => {
  test('a put over the cap fails with MediaCapExceeded, naming cap and use, and stores nothing', () => {
    const store = newStore();
    const kept = store.put(Buffer.alloc(600, 7), 'kept.bin', 'x/y');
    let err: unknown;
    try {
      store.put(Buffer.alloc(401), 'big.bin', 'x/y');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MediaCapExceeded);
    const cap = err as MediaCapExceeded;
    expect(cap.message).toMatch(/\b1000 bytes\b/);
    expect(cap.message).toMatch(/\b600 bytes\b/);
    expect(cap.message).toMatch(/\b401 bytes\b/);
    expect([cap.capBytes, cap.usedBytes, cap.requestedBytes]).toEqual([1000, 600, 401]);
    expect(store.stats()).toMatchObject({ files: 1, bytes: 600 });
    // A file that fits exactly still goes in, and the first is untouched.
    store.put(Buffer.alloc(400), 'fits.bin', 'x/y');
    expect(store.stats()).toMatchObject({ files: 2, bytes: 1000 });
    expect(store.take(kept.token)?.bytes.equals(Buffer.alloc(600, 7))).toBe(true);
  });

  test('a single file larger than the cap never fits', () => {
    const store = newStore();
    expect(() => store.put(Buffer.alloc(CAP + 1), 'huge', 'x/y')).toThrow(MediaCapExceeded);
    expect(store.stats()).toMatchObject({ files: 0, bytes: 0 });
  });

  test('a download releases its bytes, so a new put fits', () => {
    const store = newStore();
    const first = store.put(Buffer.alloc(700), 'a', 'x/y');
    expect(() => store.put(Buffer.alloc(700), 'b', 'x/y')).toThrow(MediaCapExceeded);
    store.take(first.token);
    expect(() => store.put(Buffer.alloc(700), 'b', 'x/y')).not.toThrow();
    expect(store.stats()).toMatchObject({ files: 1, bytes: 700 });
  });

  test('an expiry releases its bytes, so a new put fits', () => {
    jest.useFakeTimers();
    const store = newStore();
    store.put(Buffer.alloc(700), 'a', 'x/y');
    expect(() => store.put(Buffer.alloc(700), 'b', 'x/y')).toThrow(MediaCapExceeded);
    jest.advanceTimersByTime(TTL_MS);
    expect(() => store.put(Buffer.alloc(700), 'b', 'x/y')).not.toThrow();
    expect(store.stats()).toMatchObject({ files: 1, bytes: 700 });
  });

  test('overdue files whose timers have not run yet do not count against the cap', () => {
    const store = newStore({ ttlMs: 50 });
    store.put(Buffer.alloc(700), 'a', 'x/y');
    blockFor(80);
    expect(() => store.put(Buffer.alloc(700), 'b', 'x/y')).not.toThrow();
    expect(store.stats()).toMatchObject({ files: 1, bytes: 700 });
  });

  test('the store refuses limits that make no sense', () => {
    expect(() => new MediaStore({ ttlMs: 0, capBytes: 10 })).toThrow(RangeError);
    expect(() => new MediaStore({ ttlMs: 10, capBytes: -1 })).toThrow(RangeError);
    expect(() => new MediaStore({ ttlMs: Number.NaN, capBytes: 10 })).toThrow(RangeError);
  });
});

describe('header values', () => {
  test('filenames lose path separators, control characters, quotes and bidi tricks', () => {
    expect(safeFilename('../../etc/passwd')).toBe('.._.._etc_passwd');
    expect(safeFilename('C:\\Users\\x.txt')).toBe('C:_Users_x.txt');
    expect(safeFilename('a\r\nContent-Type: text/html\u0000.txt')).toBe(
      'aContent-Type: text_html.txt',
    );
    expect(safeFilename('say "hi".txt')).toBe('say hi.txt');
    expect(safeFilename('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(safeFilename('  \u0001 ')).toBe('download');
    expect(safeFilename('')).toBe('download');
    expect(Array.from(safeFilename('é'.repeat(500))).length).toBe(200);
  });

  test('Content-Disposition keeps the UTF-8 name (RFC 5987) with an ASCII fallback', () => {
    const h = contentDisposition('Prüfung ✓.pdf');
    expect(h).toBe(
      `attachment; filename="Prufung _.pdf"; filename*=UTF-8''Pr%C3%BCfung%20%E2%9C%93.pdf`,
    );
    // The encoded name decodes back to exactly the name given.
    const star = /filename\*=UTF-8''(\S+)$/.exec(h)?.[1] ?? '';
    expect(decodeURIComponent(star)).toBe('Prüfung ✓.pdf');
    expect(star).toMatch(/^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
    expect(contentDisposition("O'Brien (1).txt")).toContain(
      `filename*=UTF-8''O%27Brien%20%281%29.txt`,
    );
  });

  test('Content-Disposition is a valid ASCII header for any input', () => {
    const hostile = [
      '／etc／passwd',
      '＂quoted＂',
      'a\ud800b',
      '\udc00',
      'tab\there',
      '😀 emoji.png',
      'back\\slash',
    ];
    for (const name of hostile) {
      const h = contentDisposition(name);
      expect(h).toMatch(/^[\x20-\x7e]+$/);
      const plain = /filename="([^"]*)"/.exec(h)?.[1] ?? '';
      expect(plain).not.toMatch(/[/\\"]/);
      expect(plain.length).toBeGreaterThan(0);
    }
  });

  test('content types: well-formed ones kept, anything else becomes application/octet-stream', () => {
    expect(safeContentType('image/png')).toBe('image/png');
    expect(safeContentType(' text/csv; charset=utf-8 ')).toBe('text/csv; charset=utf-8');
    expect(safeContentType('text/html\r\nSet-Cookie: a=b')).toBe('application/octet-stream');
    expect(safeContentType('')).toBe('application/octet-stream');
    expect(safeContentType('png')).toBe('application/octet-stream');
    expect(safeContentType('image/pñg')).toBe('application/octet-stream');
  });

  test('the store keeps the safe forms', () => {
    const store = newStore();
    const link = store.put(Buffer.alloc(1), 'dir/a"b.txt', 'bad type');
    expect(store.take(link.token)).toMatchObject({
      filename: 'dir_ab.txt',
      contentType: 'application/octet-stream',
    });
  });
});
