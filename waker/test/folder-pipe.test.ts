/**
 * The folder pipe's receiver as the built script runs it on a node, here against a folder of
 * this machine: it takes a sender's tar stream after its token, unpacks it, and counts and
 * hashes everything that came, also the padding a tar stream may carry after the archive's end
 * (tar stops reading there and exits before the stream has ended).
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, freePort } from '@persona-browser/testkit/waker';

const SCRIPT = path.join(ROOT, 'waker', 'dist', 'folder-pipe', 'main.js');
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folder-pipe-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

function receiver(port: number, token: string): { ended: Promise<Ended> } {
  const env = {
    ...process.env,
    PIPE_DATA: path.join(dir, 'to'),
    PIPE_PERSONA: 'alice',
    PIPE_INCOMING: 'alice.incoming-1',
    PIPE_TOKEN: token,
    PIPE_PORT: String(port),
    PIPE_WAIT_MS: '20000',
  };
  const child = spawn(process.execPath, [SCRIPT, 'receive'], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return { ended: new Promise((r) => child.once('close', (code) => r({ code, stdout, stderr }))) };
}

async function connect(port: number): Promise<net.Socket> {
  for (let i = 0; ; i++) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(s));
        s.once('error', reject);
      });
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test('the receiver unpacks a stream with padding after the archive, and hashes all of it', async () => {
  const source = path.join(dir, 'from', 'alice');
  fs.mkdirSync(path.join(source, 'Default'), { recursive: true });
  fs.writeFileSync(path.join(source, 'Default', 'Cookies'), crypto.randomBytes(300_000));
  fs.mkdirSync(path.join(dir, 'to'));
  const archive = execFileSync('tar', ['-c', '--numeric-owner', '-f', '-', '-C', source, '.']);
  // Four MB of zeros after the end marker: tar has long exited when they come.
  const stream = Buffer.concat([archive, Buffer.alloc(4 * 1024 * 1024)]);
  const port = await freePort();
  const { ended } = receiver(port, 'secret');
  const socket = await connect(port);
  socket.write('secret\n');
  await new Promise<void>((resolve) => socket.end(stream, resolve));
  const { code, stdout, stderr } = await ended;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const result: unknown = JSON.parse(stdout.replace('FOLDER_PIPE_RESULT ', ''));
  expect(result).toEqual({
    bytes: stream.length,
    sha256: crypto.createHash('sha256').update(stream).digest('hex'),
    entries: 2,
    files: 1,
    fileBytes: 300_000,
  });
  const arrived = path.join(dir, 'to', 'alice.incoming-1', 'Default', 'Cookies');
  expect(fs.readFileSync(arrived)).toEqual(
    fs.readFileSync(path.join(source, 'Default', 'Cookies')),
  );
});

test('the receiver drops a connection without the token and takes the one that has it', async () => {
  fs.mkdirSync(path.join(dir, 'to'));
  const source = path.join(dir, 'from');
  fs.mkdirSync(source);
  fs.writeFileSync(path.join(source, 'note.txt'), 'hello');
  const archive = execFileSync('tar', ['-c', '-f', '-', '-C', source, '.']);
  const port = await freePort();
  const { ended } = receiver(port, 'secret');
  const stranger = await connect(port);
  const dropped = new Promise((r) => stranger.once('close', r));
  stranger.write(Buffer.concat([Buffer.from('guess!\n'), archive]));
  await dropped;
  const sender = await connect(port);
  sender.end(Buffer.concat([Buffer.from('secret\n'), archive]));
  const { code } = await ended;
  expect(code).toBe(0);
  const arrived = path.join(dir, 'to', 'alice.incoming-1', 'note.txt');
  expect(fs.readFileSync(arrived, 'utf8')).toBe('hello');
});
