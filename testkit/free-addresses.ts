/**
 * Address blocks no interface or route of this machine is in: for the bridges and overlays of
 * the test kit's clusters, so that they never shadow a network the machine uses.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';

const ip = (args: string[]): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile('ip', args, { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`ip ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });

/** The addresses `<ip>/<len>` covers, as [first, last]. */
function range(ip: string, len: number): [number, number] {
  const size = 2 ** (32 - len);
  const n = ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  return [n - (n % size), n - (n % size) + size - 1];
}

/** Every IPv4 range this machine has an address or a route in. */
export async function rangesInUse(): Promise<Array<[number, number]>> {
  const text = (await ip(['-4', '-o', 'addr'])) + (await ip(['-4', 'route']));
  const cidrs = text.matchAll(/(\d+\.\d+\.\d+\.\d+)(?:\/(\d+))?/g);
  return [...cidrs].map((m) => range(m[1] ?? '', Number(m[2] ?? 32)));
}

/** The first block `candidate(x)/len` (x from a random start) that nothing in use overlaps. */
export function freeBlock(
  used: Array<[number, number]>,
  candidate: (x: number) => string,
  len: number,
) {
  const start = crypto.randomInt(256);
  for (let i = 0; i < 256; i++) {
    const [first, last] = range(candidate((start + i) % 256), len);
    if (used.every(([f, l]) => l < first || f > last)) return candidate((start + i) % 256);
  }
  throw new Error(`no free /${len} like ${candidate(0)}: every one is in use on this machine`);
}
