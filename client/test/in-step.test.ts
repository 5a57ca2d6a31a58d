import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The in-step check: client/src/generated/api.ts is what openapi-typescript makes of the OpenAPI
 * document the current route tables and plugins give (client.test.ts shows that document is the
 * one the worker serves). A control feeds a changed document and sees the check fail.
 */

const ROOT = path.join(__dirname, '..', '..');

const generator = (...args: string[]) =>
  spawnSync(process.execPath, ['scripts/generate-client.cjs', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });

test('the checked-in declarations are in step with the routes', () => {
  const r = generator('--check');
  // The message a developer reads when the routes changed without a regeneration.
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(r.stdout).toBe('client/src/generated/api.ts is in step with the routes\n');
});

describe('control: a document the checked-in file does not match', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-client-doc-'));
  let built = '';
  beforeAll(() => {
    const r = generator('--print-document');
    expect(r.status).toBe(0);
    built = r.stdout;
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const document = () => JSON.parse(built);
  const check = (doc: unknown) => {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    return generator('--check', '--document', file);
  };

  test('the same document, read from a file, passes', () => {
    expect(check(document()).status).toBe(0);
  });

  test('a new plugin route fails the check, naming the fix', () => {
    const doc = document();
    const news = doc.paths['/api/v1/{page_id}/plugin/misc/news-search'];
    doc.paths['/api/v1/{page_id}/plugin/misc/news-brief'] = {
      post: { ...news.post, operationId: 'post-plugins-misc/news-brief' },
    };
    const r = check(doc);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^client\/src\/generated\/api\.ts is out of step with the routes \(line \d+: /,
    );
    expect(r.stderr).toMatch(/run npm run client:generate\n$/);
  });

  test('a changed response field fails the check too', () => {
    const doc = document();
    const schema =
      doc.paths['/api/v1/ops/{page_id}/extract-content'].post.responses['200'].content[
        'application/json'
      ].schema;
    schema.properties.content_length = { type: 'string' };
    const r = check(doc);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('run npm run client:generate');
  });
});
