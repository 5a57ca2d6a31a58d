import { execFile } from 'node:child_process';
import path from 'node:path';
import { KEY } from '@persona-browser/testkit/worker';
import type { Body } from './fixtures/social-world';
import { socialWorld } from './fixtures/social-world';

/**
 * social/site-check through `check:sites --worker URL`, on the stand-in Instagram: every mark
 * found on the site as the plugins know it; with its markup and API changed, exactly the
 * changed marks reported missing, a failure bundle left, and nothing submitted either way.
 */

const CLI = path.join(__dirname, '..', '..', 'waker', 'dist', 'site-checks', 'cli.js');
const world = socialWorld('sc', '11');

function checkSites(...args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = [CLI, 'social', '--worker', world.w.url, '--key', KEY, ...args];
  // A profile with a streamed post, so its opening asks the site's API about it.
  argv.push('--param', 'handle=natgeo', '--param', 'shortcode=REEL1lens', '--param', 'wait_s=2');
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { env: { ...process.env, SERVICE_KEY: '' } }, (err, stdout) =>
      resolve({ code: err ? Number(err.code) : 0, stdout }),
    );
  });
}

/** What the site received besides reading: forms, follows, POSTs of any kind. */
const submitted = (): string[] => [
  ...world.site.seen.filter((s) => s.method !== 'GET').map((s) => `${s.method} ${s.path}`),
  ...world.site.follows.map((h) => `follow ${h}`),
  ...world.site.searches.map((q) => `search ${q}`),
];

test('on the site as the plugins know it, every mark is found and nothing is submitted', async () => {
  const { code, stdout } = await checkSites('--json');
  const out = JSON.parse(stdout) as Body;
  expect(out).toMatchObject({ family: 'social', ok: true, missing: [], error: null });
  expect(code).toBe(0);
  const names = (out.items as Body[]).map((i) => i.name);
  expect(names).toEqual(
    expect.arrayContaining([
      'SELECTORS.feedArticle',
      'POSTS.time',
      'SELECTORS.profileHeader',
      'PEOPLE.followersLink',
      'SELECTORS.dialogClose',
      'API.items[0].code',
    ]),
  );
  expect((out.items as Body[]).every((i) => i.found === true)).toBe(true);
  expect(submitted()).toEqual([]);
});

test('with the markup and the API changed, exactly the changed marks are missing, with a bundle', async () => {
  world.site.setChanges({
    html: [
      ['<time datetime=', '<time data-when='],
      ['aria-label="Close"', 'aria-label="Dismiss"'],
    ],
    json: [['"code":', '"media_code":']],
  });
  try {
    const { code, stdout } = await checkSites();
    expect(code).toBe(1);
    const missingRows = stdout.split('\n').filter((l) => l.startsWith('MISSING'));
    expect(missingRows.map((l) => l.split(/\s+/)[2])).toEqual([
      'POSTS.time',
      'SELECTORS.dialogClose',
      'API.items[0].code',
    ]);
    expect(stdout).toContain('social: 3 of ');
    const id = /failure bundle: (\S+)/.exec(stdout)?.[1];
    expect(id).toBeDefined();
    const bundle = await world.w.call<Body>('GET', `/api/v1/bundles/${id}`);
    expect(bundle.status).toBe(200);
    expect(JSON.stringify(bundle.body)).toContain('social/site-check');
    expect(submitted()).toEqual([]);
  } finally {
    world.site.setChanges({});
  }
});

test('control: a workflow that writes (social/follow) is what the "nothing submitted" guard sees', async () => {
  await world.navigate('/wanderer.jo/');
  expect(submitted()).toEqual([]);
  expect(await world.post('follow', { handle: 'wanderer.jo' })).toMatchObject({ success: true });
  expect(submitted()).toEqual(['POST /web/friendships/wanderer.jo/follow/', 'follow wanderer.jo']);
});
