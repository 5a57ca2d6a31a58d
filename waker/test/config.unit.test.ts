import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readCommit } from '@persona-browser/contracts';
import { ConfigError } from '@persona-browser/service-kit';
import { loadWakerConfig } from '../src/config';
import { ownContainerIds, throughMounts } from '../src/drivers/host-path';
import { discoverPersonas } from '../src/persona/folders';

function repo(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-waker-config-'));
  fs.mkdirSync(path.join(root, 'personas'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

const NO_SOCKET = '/nonexistent/docker.sock';

describe('waker configuration', () => {
  test('defaults follow the plan; without a Docker socket the driver is process', () => {
    const root = repo({});
    expect(loadWakerConfig({}, root, NO_SOCKET)).toMatchObject({
      port: 4900,
      personasDir: path.join(root, 'personas'),
      serviceKey: null,
      metricsIntervalS: 15,
      metricsWindowS: 600,
      driver: 'process',
      image: 'persona-browser:latest',
      fleetId: 'default',
      repoRoot: root,
      pauseSeconds: 0,
      supervisorUrl: null,
      supervisorPid: null,
    });
  });

  test('SUPERVISOR_URL and PB_SUPERVISOR_PID, given by a supervisor, are read; empty is unset', () => {
    const root = repo({});
    const c = loadWakerConfig(
      { SUPERVISOR_URL: 'http://127.0.0.1:4901/', PB_SUPERVISOR_PID: '4242' },
      root,
      NO_SOCKET,
    );
    expect(c.supervisorUrl).toBe('http://127.0.0.1:4901');
    expect(c.supervisorPid).toBe(4242);
    expect(
      loadWakerConfig({ SUPERVISOR_URL: 'https://sup.example:8443/base' }, root, NO_SOCKET)
        .supervisorUrl,
    ).toBe('https://sup.example:8443/base');
    expect(
      loadWakerConfig({ SUPERVISOR_URL: '', PB_SUPERVISOR_PID: '' }, root, NO_SOCKET),
    ).toMatchObject({ supervisorUrl: null, supervisorPid: null });
  });

  test('a malformed SUPERVISOR_URL says what is expected', () => {
    const root = repo({});
    for (const bad of ['127.0.0.1:4901', 'ftp://127.0.0.1:4901', 'not a url']) {
      expect(() => loadWakerConfig({ SUPERVISOR_URL: bad }, root, NO_SOCKET)).toThrow(
        'invalid SUPERVISOR_URL: "SUPERVISOR_URL" must be an http(s) URL',
      );
    }
  });

  test('the memory budget: unset is the share of the memory and no maximum; set is read', () => {
    const root = repo({});
    expect(loadWakerConfig({}, root, NO_SOCKET).memory).toEqual({
      limitMb: null,
      maxAwake: null,
      defaultMb: 500,
      minAvailableMb: 256,
    });
    const env = {
      FLEET_MEMORY_LIMIT_MB: '2048',
      FLEET_MAX_AWAKE: '3',
      FLEET_MEMORY_DEFAULT_MB: '700',
      HOST_MEMORY_MIN_AVAILABLE_MB: '0',
    };
    expect(loadWakerConfig(env, root, NO_SOCKET).memory).toEqual({
      limitMb: 2048,
      maxAwake: 3,
      defaultMb: 700,
      minAvailableMb: 0,
    });
  });

  test("the start gate: unset is each node's cores and a minute of queue; set is read", () => {
    const root = repo({});
    expect(loadWakerConfig({}, root, NO_SOCKET)).toMatchObject({
      wakeConcurrency: null,
      wakeQueueS: 60,
    });
    expect(loadWakerConfig({ WAKER_WAKE_CONCURRENCY: '' }, root, NO_SOCKET)).toMatchObject({
      wakeConcurrency: null,
    });
    const env = { WAKER_WAKE_CONCURRENCY: '4', WAKER_WAKE_QUEUE_S: '2.5' };
    expect(loadWakerConfig(env, root, NO_SOCKET)).toMatchObject({
      wakeConcurrency: 4,
      wakeQueueS: 2.5,
    });
    expect(() => loadWakerConfig({ WAKER_WAKE_CONCURRENCY: '0' }, root, NO_SOCKET)).toThrow(
      'invalid WAKER_WAKE_CONCURRENCY',
    );
  });

  test('.env at REPO_ROOT is read and the process environment wins', () => {
    const root = repo({
      '.env':
        'WAKER_PORT=4999\nSERVICE_KEY=from-file\nCHROME_NO_SANDBOX=true\n' +
        'PROXY_USERNAME=u\nPROXY_PASSWORD=p\nGEOIP_TOKEN=t\n',
    });
    const c = loadWakerConfig(
      { REPO_ROOT: root, SERVICE_KEY: 'from-env' },
      '/elsewhere',
      NO_SOCKET,
    );
    expect(c.port).toBe(4999);
    expect(c.serviceKey).toBe('from-env');
    // Workers get the .env variables and the key, never the rest of the waker's environment,
    // nor the proxy account and GeoIP token of the waker's own.
    expect(c.workerEnv).toEqual({
      WAKER_PORT: '4999',
      SERVICE_KEY: 'from-env',
      CHROME_NO_SANDBOX: 'true',
    });
  });

  test.each([
    ['WAKER_PORT', 'abc'],
    ['WAKER_PORT', '70000'],
    ['METRICS_INTERVAL', '0'],
    ['METRICS_INTERVAL', '2.5'],
    ['METRICS_WINDOW', 'x'],
    ['METRICS_WINDOW', '5'],
    ['WAKER_DRIVER', 'kubernetes'],
    ['FLEET_ID', 'a b'],
    ['PERSONAS_DIR', './missing'],
    ['SUPERVISOR_URL', 'localhost'],
    ['PB_SUPERVISOR_PID', '0'],
    ['PB_SUPERVISOR_PID', '-5'],
    ['PB_SUPERVISOR_PID', '12.5'],
    ['PB_SUPERVISOR_PID', 'abc'],
    ['FLEET_MEMORY_LIMIT_MB', '10'],
    ['FLEET_MEMORY_LIMIT_MB', 'lots'],
    ['FLEET_MAX_AWAKE', '0'],
    ['FLEET_MEMORY_DEFAULT_MB', '-1'],
    ['HOST_MEMORY_MIN_AVAILABLE_MB', '1.5'],
  ])('a bad %s is one clear error naming it', (name, value) => {
    const root = repo({});
    expect(() => loadWakerConfig({ [name]: value }, root, NO_SOCKET)).toThrow(ConfigError);
    expect(() => loadWakerConfig({ [name]: value }, root, NO_SOCKET)).toThrow(`invalid ${name}`);
  });
});

describe('persona discovery', () => {
  test('reads every folder; a bad one is a problem naming the persona and the variable', () => {
    const root = repo({
      'personas/a/persona.env': 'PORT=5101\nMODE=always-on\nMEMORY_LIMIT_MB=1024\nCPUS=1.5\n',
      'personas/b/persona.env': 'PORT=5102\nMODE=sleepy\nIDLE_TIMEOUT=300\n',
      'personas/c/persona.env': 'PORT=5103\nMODE=sleepy\n',
      'personas/d/persona.env': 'PORT=nope\nMODE=sleepy\nIDLE_TIMEOUT=3\n',
      'personas/e/persona.env': 'PORT=5105\nMODE=always-on\nCPUS=-1\n',
      'personas/f/notes.txt': 'no persona.env here',
      'personas/.hidden/persona.env': 'PORT=1\n',
    });
    const { specs, problems } = discoverPersonas(path.join(root, 'personas'));
    expect(specs).toEqual([
      {
        name: 'a',
        dir: path.join(root, 'personas', 'a'),
        port: 5101,
        mode: 'always-on',
        idleTimeoutS: null,
        memoryLimitMb: 1024,
        cpus: 1.5,
      },
      {
        name: 'b',
        dir: path.join(root, 'personas', 'b'),
        port: 5102,
        mode: 'sleepy',
        idleTimeoutS: 300,
        memoryLimitMb: null,
        cpus: null,
      },
    ]);
    expect(problems.map((p) => [p.name, p.variable])).toEqual([
      ['c', 'IDLE_TIMEOUT'],
      ['d', 'PORT'],
      ['e', 'CPUS'],
      ['f', 'persona.env'],
    ]);
  });
});

describe('bind mount paths when the waker runs in a container', () => {
  const mounts = [
    { Source: '/srv/fleet', Destination: '/app' },
    { Source: '/srv/fleet/personas', Destination: '/app/personas' },
    { Source: '/var/run/docker.sock', Destination: '/var/run/docker.sock' },
  ];

  test('a persona folder maps to the host path of the mount that holds it', () => {
    expect(throughMounts(mounts, '/app/personas/alice')).toBe('/srv/fleet/personas/alice');
    expect(throughMounts(mounts, '/app/personas')).toBe('/srv/fleet/personas');
    expect(throughMounts(mounts, '/app/other/x')).toBe('/srv/fleet/other/x');
  });

  test('a path outside every mount stays as it is', () => {
    expect(throughMounts(mounts, '/data/personas/bob')).toBe('/data/personas/bob');
    expect(throughMounts(mounts, '/application/x')).toBe('/application/x');
  });
});

describe('own container id', () => {
  const id = 'a'.repeat(64);

  test('is read from the engine mounts, then cgroups; the hostname comes last', () => {
    const mountinfo = `612 590 0:50 /docker/containers/${id}/hostname /etc/hostname rw\n`;
    expect(ownContainerIds(mountinfo, '')[0]).toBe(id);
    const cgroup = `0::/system.slice/docker-${'b'.repeat(64)}.scope\n`;
    expect(ownContainerIds('', cgroup)[0]).toBe('b'.repeat(64));
    expect(ownContainerIds('', '')).toEqual([os.hostname()]);
  });
});

describe('the commit handed to workers', () => {
  const given = { hash: 'f00d', subject: 'built without .git', date: '2026-11-23T10:00:00.000Z' };

  test('COMMIT_INFO in the waker environment wins; git HEAD otherwise; null without either', async () => {
    await expect(
      readCommit('/nonexistent', { COMMIT_INFO: JSON.stringify(given) }),
    ).resolves.toEqual(given);
    await expect(readCommit('/nonexistent', { COMMIT_INFO: '{"hash":1}' })).resolves.toBeNull();
    const head = await readCommit(path.resolve(__dirname, '..', '..'), {});
    expect(head?.hash).toMatch(/^[0-9a-f]{40}$/);
  });
});
