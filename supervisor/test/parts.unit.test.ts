import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@persona-browser/service-kit';
import { loadSupervisorConfig } from '../src/config';
import { CommandError, checkoutOwner, run } from '../src/run';
import { StateFile } from '../src/state';
import { WakerProcess } from '../src/waker';

function checkout(dotEnv = ''): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-config-'));
  execFileSync('git', ['init', '--quiet', root]);
  if (dotEnv) fs.writeFileSync(path.join(root, '.env'), dotEnv);
  return root;
}

const NO_SOCKET = '/nonexistent/docker.sock';

describe('supervisor configuration', () => {
  test('defaults are the documented ones; without a Docker socket no image is built', () => {
    const root = checkout();
    const c = loadSupervisorConfig({}, root, NO_SOCKET);
    expect(c).toMatchObject({
      repoRoot: root,
      updateIntervalS: 10,
      healthTimeoutS: 90,
      port: 4901,
      wakerPort: 4900,
      serviceKey: null,
      stateDir: path.join(root, '.supervisor'),
      docker: null,
    });
    expect(c.wakerCommand).toEqual([process.execPath, path.join(root, 'waker/dist/main.js')]);
  });

  test('.env is read, the environment wins, and the docker driver names its image', () => {
    const root = checkout('UPDATE_INTERVAL=30\nSERVICE_KEY=from-file\nHEALTH_TIMEOUT=60\n');
    const c = loadSupervisorConfig(
      {
        HEALTH_TIMEOUT: '45',
        WAKER_DRIVER: 'docker',
        PERSONA_IMAGE: 'x/pb:1',
        PERSONA_BASE_IMAGE: 'b',
      },
      root,
      NO_SOCKET,
    );
    expect(c).toMatchObject({
      updateIntervalS: 30,
      healthTimeoutS: 45,
      serviceKey: 'from-file',
      docker: { image: 'x/pb:1', baseImage: 'b' },
    });
  });

  test.each([
    [{ UPDATE_INTERVAL: '0' }, /invalid UPDATE_INTERVAL/],
    [{ UPDATE_INTERVAL: 'often' }, /invalid UPDATE_INTERVAL/],
    [{ HEALTH_TIMEOUT: '1.5' }, /invalid HEALTH_TIMEOUT/],
    [{ SUPERVISOR_PORT: '4900' }, /invalid SUPERVISOR_PORT: it is the waker's port/],
    [{ WAKER_DRIVER: 'kubernetes' }, /invalid WAKER_DRIVER/],
    [{ WAKER_DRIVER: 'swarm', PERSONA_REGISTRY: 'https://reg:5000' }, /invalid PERSONA_REGISTRY/],
    [{ WAKER_DRIVER: 'process', PERSONA_REGISTRY: 'reg:5000' }, /invalid PERSONA_REGISTRY/],
  ])('%j is refused with one clear line', (env, message) => {
    const root = checkout();
    expect(() => loadSupervisorConfig(env, root, NO_SOCKET)).toThrow(ConfigError);
    expect(() => loadSupervisorConfig(env, root, NO_SOCKET)).toThrow(message);
  });

  test('a swarm fleet builds its image and names the registry its nodes pull from', () => {
    const root = checkout();
    const env = { WAKER_DRIVER: 'swarm', PERSONA_REGISTRY: '172.16.0.1:5000' };
    expect(loadSupervisorConfig(env, root, NO_SOCKET).docker).toEqual({
      image: 'persona-browser:latest',
      baseImage: null,
      registry: '172.16.0.1:5000',
    });
    // Without one, a single server's images stay on its own engine.
    expect(loadSupervisorConfig({ WAKER_DRIVER: 'docker' }, root, NO_SOCKET).docker).toEqual({
      image: 'persona-browser:latest',
      baseImage: null,
      registry: null,
    });
  });

  test('a folder that is not a git checkout is refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-config-'));
    expect(() => loadSupervisorConfig({}, dir, NO_SOCKET)).toThrow(/is not a git checkout/);
  });
});

describe('supervisor state file', () => {
  test('survives a new reader, and a torn or missing file starts empty', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-state-'));
    const a = new StateFile(dir);
    a.update({ healthy: 'abc', pending: { from: 'abc', to: 'def', rollingBack: false } });
    expect(new StateFile(dir).get()).toMatchObject({
      healthy: 'abc',
      pending: { from: 'abc', to: 'def', rollingBack: false },
      bad: [],
    });
    fs.writeFileSync(path.join(dir, 'state.json'), '{"healthy": "ab');
    expect(new StateFile(dir).get()).toMatchObject({ healthy: null, pending: null, bad: [] });
    expect(fs.readdirSync(dir)).toEqual(['state.json']);
  });

  test('a file of the wrong shape starts empty, not half-read', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-state-'));
    const a = new StateFile(dir);
    a.update({
      healthy: 'abc',
      bad: [{ hash: 'def', reason: 'health gate failed', at: '2026-11-26T10:00:00.000Z' }],
      wakerPid: 4321,
    });
    expect(new StateFile(dir).get()).toMatchObject({ healthy: 'abc', wakerPid: 4321 });
    expect(new StateFile(dir).get().bad).toHaveLength(1);
    fs.writeFileSync(
      path.join(dir, 'state.json'),
      JSON.stringify({ healthy: 'abc', bad: 'def', wakerPid: 'not a pid' }),
    );
    // Exactly what a folder without a state file starts with: nothing of the bad file is kept.
    const none = new StateFile(fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-state-')));
    expect(new StateFile(dir).get()).toEqual(none.get());
    expect(none.get()).toMatchObject({ healthy: null, bad: [], wakerPid: null });
  });
});

describe('command errors', () => {
  test("carry git's whole message, not its last line alone", async () => {
    const dir = checkout();
    const missing = path.join(dir, 'gone.git');
    const err = await run('git', ['ls-remote', missing], { cwd: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandError);
    const { message, detail } = err as CommandError;
    expect(message).toBe(`git ls-remote ${missing} failed (exit 128): ${detail}`);
    expect(detail.split('\n')[0]).toBe(
      `fatal: '${missing}' does not appear to be a git repository`,
    );
    expect(detail).toMatch(/\nand the repository exists\.$/);
  });

  test("never show a remote's credentials, on any line", () => {
    const err = new CommandError(
      'git fetch --quiet --prune origin',
      "fatal: unable to access 'https://bob:s3cret@git.example.com/fleet.git/': no route\n\n" +
        'hint: check https://bob:s3cret@git.example.com/\n',
      128,
    );
    expect(err.message).toBe(
      "git fetch --quiet --prune origin failed (exit 128): fatal: unable to access 'https://[redacted]@git.example.com/fleet.git/': no route\n" +
        'hint: check https://[redacted]@git.example.com/',
    );
  });

  test('say that a command ran out of time', async () => {
    const err = await run('sleep', ['30'], { cwd: os.tmpdir(), timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe('sleep 30 timed out after 0.3 s');
  });
});

describe('the waker process', () => {
  test('a command that cannot start ends with its reason, and nothing throws', async () => {
    const waker = new WakerProcess({
      command: ['/nonexistent/node', 'main.js'],
      cwd: os.tmpdir(),
      env: {},
      onLine: () => undefined,
    });
    const exits: string[] = [];
    waker.whenExits((e) => exits.push(e.last));
    waker.start({});
    const exit = await waker.ended();
    expect(exit?.last).toMatch(/ENOENT/);
    expect(exits).toEqual([exit?.last]);
    expect(waker.running).toBe(false);
  });
});

describe('a checkout owned by another user', () => {
  test('root runs the commands as its owner, so what git writes stays theirs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-owner-'));
    if (process.getuid?.() !== 0) {
      // Not root: commands run as this user, whoever owns the folder.
      expect(checkoutOwner(dir)).toBeNull();
      return;
    }
    expect(checkoutOwner(dir)).toBeNull();
    fs.chownSync(dir, 10001, 10001);
    const owner = checkoutOwner(dir);
    expect(owner).toMatchObject({ uid: 10001, gid: 10001 });
    await run('git', ['init', '--quiet', dir], { cwd: dir, as: owner });
    expect(fs.statSync(path.join(dir, '.git')).uid).toBe(10001);
    expect(fs.statSync(path.join(dir, '.git', 'HEAD')).uid).toBe(10001);
  });
});
