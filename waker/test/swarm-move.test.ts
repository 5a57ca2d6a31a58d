/**
 * Moving a persona's folder between the nodes of a real three-node Swarm (the test kit's
 * cluster) with one-shot tasks streaming it over the overlay. The nodes share this machine's
 * file system, so each gets a data folder of its own here, and the test reads both ends
 * directly: what arrives must be the same folder, byte for byte, with its owners, modes and
 * links; the source stays until removeOld. Refusals and failures change nothing and leave no
 * incoming folder and no service behind.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { createLogger } from '@persona-browser/service-kit';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import type { SwarmCluster, SwarmNode } from '@persona-browser/testkit/swarm-cluster';
import { FolderMover, MoveError } from '../src/drivers/swarm-move';
import type { FolderMoverOptions } from '../src/drivers/swarm-move';
import { PIPE_ROLE_LABEL } from '../src/folder-pipe/one-shot';

const logger = createLogger({ secrets: [], level: process.env.LOG_LEVEL ?? 'error' });
let cluster: SwarmCluster;
let mover: FolderMover;
let moverOptions: FolderMoverOptions;
let dataRoot: string;
let nodeA: SwarmNode;
let nodeB: SwarmNode;

const dataOf = (node: SwarmNode): string => path.join(dataRoot, node.hostname);

/** A persona folder as Chromium leaves one: owned by the worker's user, private files, a big
 * binary file, nested folders, names with spaces and accents, links (one dangling). */
function makePersonaFolder(dir: string): void {
  fs.mkdirSync(path.join(dir, 'Default', 'Local Storage', 'leveldb'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'Default', 'Cookies'), crypto.randomBytes(5 * 1024 * 1024));
  fs.chmodSync(path.join(dir, 'Default', 'Cookies'), 0o600);
  fs.chownSync(path.join(dir, 'Default', 'Cookies'), 10001, 10001);
  const leveldb = path.join(dir, 'Default', 'Local Storage', 'leveldb');
  fs.writeFileSync(path.join(leveldb, '000003.log'), 'a'.repeat(10_000));
  fs.writeFileSync(path.join(dir, 'Préférences été 😀.json'), '{"ok":true}\n');
  fs.chmodSync(path.join(dir, 'Préférences été 😀.json'), 0o640);
  fs.writeFileSync(path.join(dir, 'requests.log'), '{"path":"/"}\n');
  fs.chownSync(path.join(dir, 'requests.log'), 23456, 34567);
  fs.mkdirSync(path.join(dir, 'empty'));
  fs.symlinkSync('Default/Cookies', path.join(dir, 'cookies-link'));
  fs.symlinkSync('node-a-1234', path.join(dir, 'SingletonLock'));
  fs.lchownSync(path.join(dir, 'SingletonLock'), 10001, 10001);
  fs.chownSync(dir, 10001, 10001);
  fs.chmodSync(dir, 0o700);
}

/** Every entry under a folder (and the folder itself): type, mode, owner, and its content's
 * hash or its link's target (a file over 1 GiB, by its size and blocks on disk). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string): void => {
    const full = path.join(dir, rel);
    const st = fs.lstatSync(full);
    const head = `${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid}`;
    if (st.isSymbolicLink()) out[rel] = `link ${head} -> ${fs.readlinkSync(full)}`;
    else if (st.isFile() && st.size > 2 ** 30)
      out[rel] = `big file ${head} ${st.size} ${st.blocks}`;
    else if (st.isFile()) {
      const hash = crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex');
      out[rel] = `file ${head} ${st.size} ${hash}`;
    } else if (st.isDirectory()) {
      out[rel] = `dir ${head}`;
      for (const name of fs.readdirSync(full)) visit(path.join(rel, name));
    } else out[rel] = `other ${head}`;
  };
  visit('.');
  return out;
}

/** The folder-pipe services left in the swarm (none, once a move is over). */
async function pipeServices(): Promise<string[]> {
  const ls = ['service', 'ls', '--filter', `label=${PIPE_ROLE_LABEL}`, '--format', '{{.Name}}'];
  return (await cluster.docker(cluster.manager, ls)).split('\n').filter(Boolean);
}

beforeAll(async () => {
  const image = await ensurePersonaImage();
  cluster = await startSwarmCluster({ workers: 2, keepImages: true });
  const [w1, w2] = cluster.workers;
  if (!w1 || !w2) throw new Error('the cluster has not two workers');
  [nodeA, nodeB] = [w1, w2];
  await cluster.loadImage(image);
  const network = await cluster.createOverlay('move');
  dataRoot = path.join(cluster.dir, 'data');
  for (const node of cluster.nodes) fs.mkdirSync(dataOf(node), { recursive: true });
  moverOptions = {
    docker: new Docker(),
    image,
    network,
    dataDir: path.join(dataRoot, '{node}'),
    fleetId: cluster.runId,
    logger,
  };
  mover = new FolderMover(moverOptions);
}, 600_000);

afterAll(async () => {
  await cluster?.teardown();
}, 180_000);

test('a folder moves to another node whole: contents, owners, modes and links; the source goes only on removeOld', async () => {
  const source = path.join(dataOf(nodeA), 'alice');
  makePersonaFolder(source);
  const before = snapshot(source);
  const report = await mover.copy({ persona: 'alice', from: nodeA.hostname, to: nodeB.hostname });
  const copy = path.join(dataOf(nodeB), 'alice');
  expect(snapshot(copy)).toEqual(before);
  expect(snapshot(source)).toEqual(before);
  const files = Object.values(before).filter((e) => e.startsWith('file '));
  expect(report).toMatchObject({
    persona: 'alice',
    from: nodeA.hostname,
    to: nodeB.hostname,
    files: files.length,
    entries: Object.keys(before).length - 1,
    fileBytes: files.reduce((sum, e) => sum + Number(e.split(' ')[3]), 0),
    sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
  });
  expect(report.bytes).toBeGreaterThan(5 * 1024 * 1024);
  // Only the folder itself arrived: no incoming folder is left beside it.
  expect(fs.readdirSync(dataOf(nodeB))).toEqual(['alice']);
  expect(await pipeServices()).toEqual([]);

  const removed = await mover.removeOld({
    persona: 'alice',
    from: nodeA.hostname,
    to: nodeB.hostname,
  });
  expect(removed).toEqual({ existed: true });
  expect(fs.existsSync(source)).toBe(false);
  expect(snapshot(copy)).toEqual(before);
  expect(await pipeServices()).toEqual([]);
  console.log(
    `moved ${report.files} files, ${report.bytes} bytes between nodes in ${report.ms} ms`,
  );
}, 240_000);

test('a target node that has the folder already refuses the move: nothing on either node changes', async () => {
  const source = path.join(dataOf(nodeA), 'bob');
  const target = path.join(dataOf(nodeB), 'bob');
  makePersonaFolder(source);
  fs.mkdirSync(target);
  fs.writeFileSync(path.join(target, 'mine.txt'), 'the target keeps this');
  const [sourceBefore, targetBefore] = [snapshot(source), snapshot(target)];
  const req = { persona: 'bob', from: nodeA.hostname, to: nodeB.hostname };
  const err: unknown = await mover.copy(req).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MoveError);
  expect(err).toMatchObject({ step: 'receive', node: nodeB.hostname, reason: 'exists' });
  expect(String(err)).toMatch(/bob already exists here: it is never overwritten/);
  expect(snapshot(source)).toEqual(sourceBefore);
  expect(snapshot(target)).toEqual(targetBefore);
  expect(fs.readdirSync(dataOf(nodeB)).filter((n) => n.startsWith('bob'))).toEqual(['bob']);
  expect(await pipeServices()).toEqual([]);
}, 240_000);

test('a sender whose folder does not exist fails naming the step and node, and leaves nothing behind', async () => {
  const req = { persona: 'ghost', from: nodeA.hostname, to: cluster.manager.hostname };
  const err: unknown = await mover.copy(req).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MoveError);
  expect(err).toMatchObject({ step: 'send', node: nodeA.hostname, reason: 'failed' });
  expect(String(err)).toMatch(/there is no folder ghost here/);
  expect(fs.readdirSync(dataOf(cluster.manager))).toEqual([]);
  expect(await pipeServices()).toEqual([]);
}, 240_000);

test('a copy that runs out of time mid-stream stops its tasks and removes what had arrived', async () => {
  const source = path.join(dataOf(nodeA), 'dave');
  makePersonaFolder(source);
  // 16 GiB of holes: tar reads them as zeros, far more than streams in the time given.
  const holes = path.join(source, 'Default', 'huge.bin');
  fs.closeSync(fs.openSync(holes, 'w'));
  fs.truncateSync(holes, 16 * 1024 ** 3);
  const before = snapshot(source);
  const slow = new FolderMover({ ...moverOptions, timeoutMs: 10_000 });
  const req = { persona: 'dave', from: nodeA.hostname, to: nodeB.hostname };
  // What the target holds meanwhile: an incoming folder that grows.
  let arrived = 0;
  const watch = setInterval(() => {
    for (const name of fs.readdirSync(dataOf(nodeB)).filter((n) => n.startsWith('dave.'))) {
      const file = path.join(dataOf(nodeB), name, 'Default', 'huge.bin');
      // Gone between the listing and the look: the next round sees it.
      const blocks = fs.statSync(file, { throwIfNoEntry: false })?.blocks ?? 0;
      arrived = Math.max(arrived, blocks * 512);
    }
  }, 100);
  const err: unknown = await slow
    .copy(req)
    .catch((e: unknown) => e)
    .finally(() => clearInterval(watch));
  expect(err).toBeInstanceOf(MoveError);
  expect(err).toMatchObject({ step: 'receive', node: nodeB.hostname, reason: 'timeout' });
  expect(arrived).toBeGreaterThan(0);
  expect(fs.readdirSync(dataOf(nodeB)).filter((n) => n.startsWith('dave'))).toEqual([]);
  expect(snapshot(source)).toEqual(before);
  expect(await pipeServices()).toEqual([]);
}, 240_000);

test('a move to the same node or to a node not in the swarm is refused before any task starts', async () => {
  const same = { persona: 'carol', from: nodeA.hostname, to: nodeA.hostname };
  await expect(mover.copy(same)).rejects.toMatchObject({ step: 'check', reason: 'invalid' });
  const nowhere = { persona: 'carol', from: nodeA.hostname, to: 'no-such-node' };
  await expect(mover.copy(nowhere)).rejects.toThrow(/check on no-such-node: no such node/);
  const bad = { persona: '../etc', from: nodeA.hostname, to: nodeB.hostname };
  await expect(mover.removeOld(bad)).rejects.toMatchObject({ step: 'check', reason: 'invalid' });
  expect(await pipeServices()).toEqual([]);
});
