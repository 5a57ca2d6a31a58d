/**
 * The hint a failed navigation to a loopback address gets inside a persona container (the
 * container test in waker/test/docker-fleet.test.ts shows it end to end).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hostKnownByName, loopbackHint } from '../src/browser/loopback-hint';

describe('loopback hint', () => {
  test('loopback addresses inside a persona container name host.docker.internal and the URL to use', () => {
    expect(loopbackHint('http://127.0.0.1:8080/shop?q=1', true)).toBe(
      ' — inside a container 127.0.0.1 is the container itself; a site on the host is reached ' +
        'at host.docker.internal (http://host.docker.internal:8080/shop?q=1), and must listen ' +
        'on an address the container reaches (0.0.0.0 or the Docker bridge), not on 127.0.0.1 alone',
    );
    for (const url of [
      'http://localhost:3000/',
      'https://LOCALHOST/',
      'http://app.localhost:5173/',
      'http://127.0.1.1/',
      'http://[::1]:8080/',
      'http://0.0.0.0:8080/',
    ]) {
      expect(loopbackHint(url, true)).toContain('host.docker.internal');
    }
  });

  test('no hint for other hosts, outside a container, or for what is not a URL', () => {
    for (const url of [
      'http://example.com/',
      'http://10.0.0.5/',
      'http://127.example.com/',
      'nonsense',
    ]) {
      expect(loopbackHint(url, true)).toBe('');
    }
    expect(loopbackHint('http://127.0.0.1:8080/', false)).toBe('');
  });

  test('a persona container is one with a container marker whose hosts file names host.docker.internal', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-loopback-'));
    const marker = path.join(dir, '.dockerenv');
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(marker, '');
    fs.writeFileSync(hosts, '127.0.0.1 localhost\n172.17.0.1\thost.docker.internal\n');
    expect(hostKnownByName(hosts, [marker])).toBe(true);
    expect(hostKnownByName(hosts, [path.join(dir, 'absent')])).toBe(false);
    fs.writeFileSync(hosts, '127.0.0.1 localhost\n# 172.17.0.1 host.docker.internal\n');
    expect(hostKnownByName(hosts, [marker])).toBe(false);
    expect(hostKnownByName(path.join(dir, 'no-hosts'), [marker])).toBe(false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
