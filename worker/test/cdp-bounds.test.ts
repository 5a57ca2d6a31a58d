import net from 'node:net';
import WebSocket from 'ws';
import { newTokenId, TokenSigner } from '@persona-browser/service-kit';
import type { Sample } from '@persona-browser/testkit/prometheus';
import { parseExposition, valueOf } from '@persona-browser/testkit/prometheus';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { CLOSE_GRACE_MS } from '../src/remote/devtools-client';

/**
 * The DevTools endpoint's bounds, on a real worker and browser: a client that reads nothing
 * while the browser answers it with large messages is dropped once its unsent data passes
 * DEVTOOLS_CLIENT_BUFFER_MB, and the worker's memory does not grow with what it was sent; a
 * client that drops during its upgrade leaves no guest link behind; a connection opened with
 * a token ends when the token is revoked or expires.
 */

const W = 'persona_browser_worker_';
const LIMIT_MB = 8;
const LIMIT = LIMIT_MB * 1024 * 1024;
/** Each answer the silent client asks for: a string of this many characters. */
const ANSWER_CHARS = 4 * 1024 * 1024;
/** Answers asked for: 60 × 4 MB, thirty times the limit. */
const ANSWERS = 60;
/**
 * What was asked (240 MB): without the bound the worker holds all of it for the client, and
 * grows by at least that. With it the worker holds the limit, and what reaches it meanwhile
 * passes through as a few copies (the pipe's bytes, the parsed reply, the text sent) that the
 * garbage collector takes when it gets to it, and the browser goes on answering for a moment
 * after the drop: 22 to 51 MB on a quiet machine, 127 MB once in a CI run whose other lanes
 * kept both cores busy. So the test holds the worker to less than what was asked, the one
 * relation that load does not move.
 */
const ASKED = ANSWERS * ANSWER_CHARS;
const PERSONA = 'tester';

let w: RunningWorker;

beforeAll(async () => {
  w = await startWorker({
    persona: PERSONA,
    env: { DEVTOOLS_CLIENT_BUFFER_MB: String(LIMIT_MB) },
  });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

async function scrape(): Promise<Sample[]> {
  const r = await fetch(`${w.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(r.status).toBe(200);
  return parseExposition(await r.text());
}

const rss = async (): Promise<number> =>
  valueOf(await scrape(), `${W}process_resident_memory_bytes`);

const endpoint = async (): Promise<string> => {
  const r = await w.call<Record<string, string>>('GET', '/json/version');
  return r.body.webSocketDebuggerUrl as string;
};

/** The worker's log lines with `message`, parsed. */
const logged = (message: string): Array<Record<string, unknown>> =>
  w.logs
    .filter((l) => l.includes(`"message":"${message}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 20_000,
  detail: () => string = () => '',
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} ${detail()}`.trim());
    await new Promise((r) => setTimeout(r, 100));
  }
}

const mb = (bytes: number): string => (bytes / 1048576).toFixed(1);

/** A raw DevTools client: commands by id, and how its WebSocket closed. */
class RawClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Record<string, any>) => void>();
  readonly closed: Promise<{ code: number; reason: string; at: number }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('error', () => undefined);
    ws.on('message', (data: Buffer) => {
      const reply = JSON.parse(data.toString('utf8')) as Record<string, any>;
      if (typeof reply.id === 'number') this.waiting.get(reply.id)?.(reply);
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) =>
        resolve({ code, reason: reason.toString('utf8'), at: Date.now() }),
      ),
    );
  }

  static async open(bearer: string): Promise<RawClient> {
    const ws = new WebSocket(await endpoint(), {
      headers: { authorization: `Bearer ${bearer}` },
      maxPayload: 1024 * 1024 * 1024,
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new RawClient(ws);
  }

  /** Sends a command without waiting for its reply. */
  send(method: string, params: object = {}, sessionId?: string): number {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return id;
  }

  async call(method: string, params: object = {}, sessionId?: string): Promise<any> {
    const id = this.nextId;
    const reply = new Promise<Record<string, any>>((resolve) => this.waiting.set(id, resolve));
    this.send(method, params, sessionId);
    const r = await reply;
    this.waiting.delete(id);
    if (r.error) throw new Error(JSON.stringify(r.error));
    return r.result;
  }

  /** A page of its own, and its session on it. */
  async page(): Promise<string> {
    const { targetId } = await this.call('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.call('Target.attachToTarget', { targetId, flatten: true });
    return sessionId as string;
  }
}

const bigAnswer = { expression: `'x'.repeat(${ANSWER_CHARS})`, returnByValue: true };

/** A client on a page of its own that has read one big answer (the way works, the worker's paths are warm). */
async function readingClient(): Promise<{ client: RawClient; session: string }> {
  const client = await RawClient.open(KEY);
  const session = await client.page();
  const first = await client.call('Runtime.evaluate', bigAnswer, session);
  expect((first.result.value as string).length).toBe(ANSWER_CHARS);
  return { client, session };
}

/** The client stops reading, and asks for `answers` big answers. */
function stopReading(c: { client: RawClient; session: string }, answers: number): void {
  c.client.ws.pause();
  for (let i = 0; i < answers; i++) c.client.send('Runtime.evaluate', bigAnswer, c.session);
}

test('a client that reads nothing is dropped past the limit, its socket let go, and the worker does not hold what it was sent', async () => {
  const dropsBefore = valueOf(await scrape(), `${W}devtools_clients_dropped_total`);
  const leftBefore = logged('devtools client disconnected').length;
  const silent = await readingClient();
  const before = await rss();
  let peak = before;
  const grew = (): string => `${mb(peak - before)} MB`;

  // Thirty times the limit asked for, and never read.
  stopReading(silent, ANSWERS);
  // Without the bound it is never dropped: the wait fails, saying how much the worker grew.
  await until(
    async () => {
      peak = Math.max(peak, await rss());
      return logged('devtools client dropped').length > dropsBefore;
    },
    'the client to be dropped',
    40_000,
    () => `the worker's RSS grew by ${grew()} meanwhile`,
  );
  const drop = logged('devtools client dropped')[dropsBefore];
  expect(drop).toMatchObject({ level: 'warn', credential: 'key', limit_bytes: LIMIT });
  expect(drop?.unsent_bytes).toBeGreaterThan(LIMIT);
  expect(drop?.unsent_bytes).toBeLessThanOrEqual(LIMIT + ANSWER_CHARS + 1024);
  const droppedAt = Date.now();

  // Though it still reads nothing, its socket is let go within the grace (its queue with it),
  // its page is closed and its link released, as on any disconnect.
  await until(async () => {
    const s = await scrape();
    peak = Math.max(peak, valueOf(s, `${W}process_resident_memory_bytes`));
    return valueOf(s, `${W}devtools_clients`) === 0 && valueOf(s, `${W}devtools_guest_links`) === 0;
  }, 'the client and its link to be gone');
  expect(Date.now() - droppedAt).toBeLessThan(CLOSE_GRACE_MS + 3_000);
  expect(logged('devtools client disconnected')[leftBefore]).toMatchObject({
    credential: 'key',
    closed_targets: 1,
  });
  expect(valueOf(await scrape(), `${W}devtools_clients_dropped_total`)).toBe(dropsBefore + 1);

  // What it was sent is not held: the worker grew by the limit and the copies in flight, not by
  // what was asked.
  process.stdout.write(
    `worker RSS ${mb(before)} MB before, peak ${grew()} above it ` +
      `(limit ${LIMIT_MB} MB; the client asked for ${mb(ASKED)} MB)\n`,
  );
  expect(peak - before).toBeLessThan(ASKED);
  silent.client.ws.terminate();
});

test('a client that reads again after its drop finds the close code and why', async () => {
  const dropsBefore = logged('devtools client dropped').length;
  const slow = await readingClient();
  // Enough for the kernel's buffers and then the limit to fill.
  stopReading(slow, 12);
  await until(() => logged('devtools client dropped').length > dropsBefore, 'the drop');
  // Read now, within the grace: what was queued before the drop, then the close frame.
  slow.client.ws.resume();
  const closed = await closedWithin(slow.client, CLOSE_GRACE_MS + 3_000);
  expect(closed.code).toBe(1008);
  expect(closed.reason).toMatch(
    new RegExp(`^unsent data of \\d+ bytes passed DEVTOOLS_CLIENT_BUFFER_MB \\(${LIMIT_MB} MB\\)$`),
  );
});

test('a client that drops during its upgrade leaves no guest link behind', async () => {
  const url = new URL(await endpoint());
  const request =
    `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\n` +
    'Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
    `Authorization: Bearer ${KEY}\r\n\r\n`;
  const left = (): number => logged('devtools client left during the upgrade').length;
  const served = (): number => logged('devtools client connected').length;
  const [leftBefore, servedBefore] = [left(), served()];
  const ATTEMPTS = 5;
  for (let i = 0; i < ATTEMPTS; i++) {
    // The request, and a reset right behind it: the worker reads the request, starts opening
    // the client's guest link, and (almost always) finds the socket reset before it is open.
    const socket = net.connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(request);
    socket.resetAndDestroy();
  }
  // Each attempt is told: gone during its upgrade, or (reset a moment too late) served.
  let links = 0;
  await until(
    async () => {
      links = valueOf(await scrape(), `${W}devtools_guest_links`);
      return left() - leftBefore + (served() - servedBefore) === ATTEMPTS;
    },
    'the worker to have seen every attempt',
    20_000,
    () => `(guest links held: ${links})`,
  );
  expect(left() - leftBefore).toBeGreaterThanOrEqual(1);
  await until(async () => {
    const s = await scrape();
    return valueOf(s, `${W}devtools_guest_links`) === 0 && valueOf(s, `${W}devtools_clients`) === 0;
  }, 'no guest link to be held');
  // The endpoint still serves a client that stays.
  const client = await RawClient.open(KEY);
  expect(await client.page()).toMatch(/^[0-9A-F]+$/);
  client.ws.close();
  await client.closed;
});

/** How the client's connection closed, or a failure once `ms` passed with it open. */
async function closedWithin(
  client: RawClient,
  ms: number,
): Promise<{ code: number; reason: string; at: number }> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the connection is still open after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([client.closed, open]);
  } finally {
    clearTimeout(timer);
  }
}

/** A `full` token of this persona, expiring `inS` seconds from now. */
function fullToken(inS: number): { id: string; token: string; exp: number } {
  const id = newTokenId();
  const exp = Math.ceil(Date.now() / 1000 + inS);
  const token = new TokenSigner(KEY).sign({
    id,
    persona: PERSONA,
    scope: 'full',
    page_id: null,
    label: 'cdp-bounds',
    exp,
  });
  return { id, token, exp };
}

test("a token's connection closes within a second of its revocation", async () => {
  const { id, token } = fullToken(600);
  const client = await RawClient.open(token);
  await client.page();
  const connected = logged('devtools client connected').at(-1);
  expect(connected).toMatchObject({ credential: id });
  // The waker's push of its revoked tokens, with the service key.
  const revokedAt = Date.now();
  const pushed = await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [id] } });
  expect(pushed.status).toBe(200);
  const closed = await closedWithin(client, 5_000);
  expect(closed).toMatchObject({ code: 1008, reason: 'the token was revoked' });
  expect(closed.at - revokedAt).toBeLessThan(1_000);
  // And it opens nothing more.
  await expect(RawClient.open(token)).rejects.toThrow(/401/);
  await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [] } });
});

test("a token's connection closes when the token expires", async () => {
  const { id, token, exp } = fullToken(2);
  const client = await RawClient.open(token);
  const closed = await closedWithin(client, exp * 1000 - Date.now() + 5_000);
  expect(closed).toMatchObject({ code: 1008, reason: 'the token expired' });
  // At its expiry, not before, and within a second after.
  expect(closed.at).toBeGreaterThanOrEqual(exp * 1000);
  expect(closed.at - exp * 1000).toBeLessThan(1_000);
  await until(
    () => logged('devtools client disconnected').some((l) => l.credential === id),
    'its disconnect',
  );
});
