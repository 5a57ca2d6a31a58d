/**
 * A real image registry (Debian's `docker-registry`) served over HTTPS on an address of the
 * test's own, trusted by every engine of this machine through a test CA in
 * `/etc/docker/certs.d/<host:port>/ca.crt` (dockerd reads that folder on each pull and push, so
 * no engine is restarted; the namespaced engines of the Swarm test kit share this file system).
 * stop() removes the process, its storage, its certificates and the trust folder.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCommand } from './command';

const CERTS_D = '/etc/docker/certs.d';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const run = (cmd: string, args: string[], cwd: string): Promise<string> =>
  runCommand(cmd, args, { cwd });

/** A port free on `address` now (the registry binds it a moment later). */
function freePortOn(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const at = server.address();
      const port = typeof at === 'object' && at ? at.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A CA, and a certificate it signs for the IP address `address`. */
async function makeCertificates(dir: string, address: string): Promise<void> {
  const ssl = (args: string[]): Promise<string> => run('openssl', args, dir);
  await ssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-subj',
      '/CN=persona-browser test CA',
    ]),
  );
  await ssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'registry.key'].concat([
      '-out',
      'registry.csr',
      '-subj',
      `/CN=${address}`,
    ]),
  );
  fs.writeFileSync(path.join(dir, 'san.ext'), `subjectAltName=IP:${address}\n`);
  await ssl(
    ['x509', '-req', '-in', 'registry.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key'].concat([
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'san.ext',
      '-out',
      'registry.crt',
    ]),
  );
}

/** Whether `GET /v2/` answers over HTTPS with the test CA (200 or 401 both mean it serves). */
function answers(host: string, ca: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(`https://${host}/v2/`, { ca, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 || res.statusCode === 401);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

export interface TestRegistry {
  /** `address:port`, as image names and `certs.d` spell it. */
  host: string;
  /** The test CA's certificate (PEM). */
  ca: Buffer;
  /** Names the registry holds (its catalogue). */
  repositories(): Promise<string[]>;
  /** The tags of one repository. */
  tags(repository: string): Promise<string[]>;
  /** Stops the registry and removes its storage, certificates and trust folder. */
  stop(): Promise<void>;
}

function getJson(url: string, ca: Buffer): Promise<unknown> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, timeout: 10_000 }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      })
      .on('error', reject);
  });
}

const stringsOf = (body: unknown, key: string): string[] => {
  const list = typeof body === 'object' && body !== null ? Reflect.get(body, key) : null;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
};

/** Starts a registry listening on `address` (an address of this machine, e.g. a bridge's). */
export async function startRegistry(address: string): Promise<TestRegistry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-registry-'));
  let child: ChildProcess | null = null;
  let trust: string | null = null;
  const madeCertsD = !fs.existsSync(CERTS_D);
  const stop = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (trust) fs.rmSync(trust, { recursive: true, force: true });
    // The trust folder itself, when this registry made it and no other host is left in it.
    if (madeCertsD && fs.existsSync(CERTS_D) && fs.readdirSync(CERTS_D).length === 0) {
      fs.rmdirSync(CERTS_D);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await makeCertificates(dir, address);
    const port = await freePortOn(address);
    const host = `${address}:${port}`;
    const config = [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(dir, 'storage')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}`,
      '  tls:',
      `    certificate: ${path.join(dir, 'registry.crt')}`,
      `    key: ${path.join(dir, 'registry.key')}`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'config.yml'), config);
    const log = fs.openSync(path.join(dir, 'registry.log'), 'a');
    const proc = spawn('docker-registry', ['serve', path.join(dir, 'config.yml')], {
      stdio: ['ignore', log, log],
    });
    child = proc;
    fs.closeSync(log);
    const ca = fs.readFileSync(path.join(dir, 'ca.crt'));
    trust = path.join(CERTS_D, host);
    fs.mkdirSync(trust, { recursive: true });
    fs.writeFileSync(path.join(trust, 'ca.crt'), ca);
    const deadline = Date.now() + 30_000;
    while (!(await answers(host, ca))) {
      if (proc.exitCode !== null || Date.now() > deadline) {
        const said = fs.readFileSync(path.join(dir, 'registry.log'), 'utf8').slice(-2_000);
        throw new Error(`docker-registry did not serve on ${host}:\n${said}`);
      }
      await sleep(200);
    }
    return {
      host,
      ca,
      repositories: async () =>
        stringsOf(await getJson(`https://${host}/v2/_catalog`, ca), 'repositories'),
      tags: async (repository) =>
        stringsOf(await getJson(`https://${host}/v2/${repository}/tags/list`, ca), 'tags'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
