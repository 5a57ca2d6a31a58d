import { PassThrough } from 'node:stream';
import winston from 'winston';
import { createLogger, redact } from '../src/logger';
import { MAX_DEPTH } from '../src/redact-tree';
import { SecretValues } from '../src/secrets';

/**
 * Redaction holds at any depth: the service's real logger writes its JSON lines to a stream the
 * test reads, and no secret (a known value, or the text of a secret-named field) reaches them,
 * however deep it is nested, in a cyclic object too; a chain far deeper than any stack is
 * logged without a stack overflow. `SecretValues.redactAll` (plugin errors, failure bundles)
 * holds alike.
 */

const SECRET = 'sk-live-4f9a0c7e';
const PASSWORD = 'hunter2-correct-horse';

/** A real logger whose lines land in the returned array (the console transport muted). */
function loggerToLines(): { logger: winston.Logger; written: () => Promise<string[]> } {
  const logger = createLogger({ secrets: [SECRET], level: 'info' });
  const stream = new PassThrough();
  const text: string[] = [];
  stream.on('data', (chunk: Buffer) => text.push(chunk.toString('utf8')));
  for (const t of logger.transports) t.silent = true;
  logger.add(new winston.transports.Stream({ stream }));
  // The transport writes on the next tick: wait for the stream to have taken what was logged.
  const written = async (): Promise<string[]> => {
    await new Promise((resolve) => setImmediate(resolve));
    return text.join('').split('\n').filter(Boolean);
  };
  return { logger, written };
}

/** `{next: {next: … {note: 'uses <secret>', password: <password>}}}`, `depth` levels down. */
function nested(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = { note: `uses ${SECRET}`, password: PASSWORD };
  for (let i = 0; i < depth; i++) inner = { next: inner };
  return inner;
}

/** The object `depth` levels down a `nested` chain of parsed JSON. */
function down(value: unknown, depth: number): unknown {
  let at = value;
  for (let i = 0; i < depth; i++) at = (at as Record<string, unknown>).next;
  return at;
}

test('a secret and a secret-named field ten levels down are redacted, the rest kept', async () => {
  const { logger, written } = loggerToLines();
  logger.info('deep', { detail: nested(10) });
  const [line] = await written();
  expect(line).toBeDefined();
  expect(line).not.toContain(SECRET);
  expect(line).not.toContain(PASSWORD);
  const parsed = JSON.parse(line as string) as Record<string, unknown>;
  expect(down(parsed.detail, 10)).toEqual({ note: 'uses [redacted]', password: '[redacted]' });
});

test('a thousand levels down nothing secret is written: the value past the depth limit is replaced', async () => {
  const { logger, written } = loggerToLines();
  logger.info('deeper', { detail: nested(1_000) });
  const [line] = await written();
  expect(line).toBeDefined();
  expect(line).not.toContain(SECRET);
  expect(line).not.toContain(PASSWORD);
  const parsed = JSON.parse(line as string) as Record<string, unknown>;
  // `detail` is one level under the line itself.
  expect(down(parsed.detail, MAX_DEPTH - 2)).toEqual({ next: '[redacted: nested too deep]' });
});

test('a chain a hundred thousand deep is logged without a stack overflow', async () => {
  const { logger, written } = loggerToLines();
  expect(() => logger.info('very deep', { detail: nested(100_000) })).not.toThrow();
  const [line] = await written();
  expect(line).toContain('very deep');
  expect(line).not.toContain(SECRET);
});

test('a cyclic object is logged once, its cycle named, its secrets redacted', async () => {
  const { logger, written } = loggerToLines();
  const a: Record<string, unknown> = { name: 'a', token: PASSWORD };
  const b: Record<string, unknown> = { name: 'b', back: a, deep: nested(6) };
  a.child = b;
  // A shared reference is not a cycle: both places show it.
  const shared = { note: SECRET };
  logger.info('cyclic', { a, left: shared, right: shared });
  const [line] = await written();
  expect(line).not.toContain(SECRET);
  expect(line).not.toContain(PASSWORD);
  const parsed = JSON.parse(line as string) as Record<string, any>;
  expect(parsed.a).toMatchObject({ name: 'a', token: '[redacted]' });
  expect(parsed.a.child.back).toBe('[circular]');
  expect(down(parsed.a.child.deep, 6)).toEqual({ note: 'uses [redacted]', password: '[redacted]' });
  expect(parsed.left).toEqual({ note: '[redacted]' });
  expect(parsed.right).toEqual({ note: '[redacted]' });
});

test('an Error deep in a field shows as its name and redacted message', () => {
  const out = redact({ a: { b: { c: { d: { e: new TypeError(`bad ${SECRET}`) } } } } }, [SECRET]);
  expect(JSON.stringify(out)).toBe(
    '{"a":{"b":{"c":{"d":{"e":{"name":"TypeError","message":"bad [redacted]"}}}}}}',
  );
});

test('a very wide value is cut short, not written whole', () => {
  const wide = Array.from({ length: 100_000 }, (_, i) => `item ${i} ${SECRET}`);
  const out = redact({ wide }, [SECRET]) as { wide: string[] };
  const text = JSON.stringify(out);
  expect(text).not.toContain(SECRET);
  expect(out.wide[0]).toBe('item 0 [redacted]');
  expect(out.wide[99_999]).toBe('[redacted: too large]');
});

test('shared objects nested in one another are no deeper in the copy than the limit', () => {
  // Each level holds the one before it at the end of a chain just short of the limit: every
  // object is first met near the top, yet together they nest 200 chains deep.
  let last: unknown = { note: SECRET };
  const levels: unknown[] = [last];
  for (let i = 0; i < 200; i++) {
    let chain: unknown = last;
    for (let d = 0; d < MAX_DEPTH - 5; d++) chain = { next: chain };
    last = chain;
    levels.push(last);
  }
  const out = redact(levels, [SECRET]);
  const depthOf = (v: unknown): number => {
    let deepest = 0;
    const stack: Array<[unknown, number]> = [[v, 0]];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const [value, d] = item;
      deepest = Math.max(deepest, d);
      if (typeof value === 'object' && value !== null)
        for (const child of Object.values(value)) stack.push([child, d + 1]);
    }
    return deepest;
  };
  expect(depthOf(out)).toBeLessThanOrEqual(MAX_DEPTH);
  expect(() => JSON.stringify(out)).not.toThrow();
  expect(JSON.stringify(out)).not.toContain(SECRET);
});

describe('SecretValues.redactAll', () => {
  const secrets = new SecretValues([SECRET]);

  test('redacts a thousand levels down, and replaces a chain past the depth limit', () => {
    const out = JSON.stringify(secrets.redactAll(nested(1_000)));
    expect(out).not.toContain(SECRET);
    const shallow = secrets.redactAll(nested(10));
    expect(down(shallow, 10)).toEqual({ note: 'uses [redacted]', password: PASSWORD });
  });

  test('takes a cyclic object and a chain a hundred thousand deep', () => {
    const a: Record<string, unknown> = { note: SECRET };
    a.self = a;
    expect(secrets.redactAll(a)).toEqual({ note: '[redacted]', self: '[circular]' });
    expect(() => JSON.stringify(secrets.redactAll(nested(100_000)))).not.toThrow();
  });
});
