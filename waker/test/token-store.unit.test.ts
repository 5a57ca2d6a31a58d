import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TokenSigner } from '@persona-browser/service-kit';
import { TOKENS_FILE, TokenStore } from '../src/tokens/store';

/** The waker's token list on a real folder: what it keeps, forgets and refuses to read. */
const KEY = 'store-test-key';
let dir: string;
let now: number;
const clock = (): number => now;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-tokens-'));
  now = Date.parse('2026-11-28T12:00:00Z');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a token it makes verifies, with what was asked; the list and the file never hold it', () => {
  const store = new TokenStore(dir, KEY, clock);
  const { info, token } = store.mint({ persona: 'alice', scope: 'live', ttl_s: 60, page_id: 'p1' });
  const checked = new TokenSigner(KEY).verify(token, now);
  expect(checked).toMatchObject({
    ok: true,
    claims: { id: info.id, persona: 'alice', scope: 'live', page_id: 'p1', label: null },
  });
  expect(info.expires_at).toBe('2026-11-28T12:01:00.000Z');
  expect(JSON.stringify(store.list())).not.toContain(token);
  const file = fs.readFileSync(path.join(dir, TOKENS_FILE), 'utf8');
  expect(file).toContain(info.id);
  expect(file).not.toContain(token.split('.')[1]);
  expect(fs.statSync(path.join(dir, TOKENS_FILE)).mode & 0o777).toBe(0o600);
});

test('a revoked token stays refused until its expiry, then leaves the file; a restart keeps both', () => {
  const store = new TokenStore(dir, KEY, clock);
  const a = store.mint({ persona: 'alice', scope: 'read', ttl_s: 100 }).info;
  const b = store.mint({ persona: 'bob', scope: 'full', ttl_s: 100 }).info;
  const heard: string[] = [];
  store.onRevoke((p) => heard.push(p));
  expect(store.revoke(a.id)).toBe(true);
  expect(store.revoke(a.id)).toBe(false);
  expect(heard).toEqual(['alice']);
  expect(store.list().map((t) => t.id)).toEqual([b.id]);
  expect(store.revokedOf('alice')).toEqual([a.id]);
  expect(store.revokedOf('bob')).toEqual([]);
  const again = new TokenStore(dir, KEY, clock);
  expect(again.isRevoked(a.id)).toBe(true);
  expect(again.list().map((t) => t.id)).toEqual([b.id]);
  now += 101_000;
  expect(again.revokedOf('alice')).toEqual([]);
  expect(again.list()).toEqual([]);
  expect(fs.readFileSync(path.join(dir, TOKENS_FILE), 'utf8')).not.toContain(a.id);
});

test('a file it cannot read stops the waker with a line naming it, rather than losing revocations', () => {
  fs.writeFileSync(path.join(dir, TOKENS_FILE), '{"tokens": [');
  expect(() => new TokenStore(dir, KEY, clock)).toThrow(/tokens\.json is not JSON/);
  fs.writeFileSync(path.join(dir, TOKENS_FILE), '{"list": []}');
  expect(() => new TokenStore(dir, KEY, clock)).toThrow(/no "tokens" list/);
});

test('without a service key no token can be made', () => {
  const store = new TokenStore(dir, null, clock);
  expect(() => store.mint({ persona: 'alice', scope: 'read', ttl_s: 10 })).toThrow(/SERVICE_KEY/);
});
