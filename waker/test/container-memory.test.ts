/**
 * The count of what a container holds (`cgroupHeldMb`, which the fleet bench reports per
 * persona) against the real Docker engine: 64 MB of anonymous memory and 64 MB of shared memory
 * inside a container each show up in it, and 64 MB of written files do not, while Docker's own
 * usage figure of that container, which counts its page cache, does see them (the control).
 */
import crypto from 'node:crypto';
import type Docker from 'dockerode';
import { dockerClient, ensurePersonaImage } from '@persona-browser/testkit/image';
import { cgroupHeldMb } from '@persona-browser/testkit/procs';
import type { HeldMemory } from '@persona-browser/testkit/procs';
import { until } from '@persona-browser/testkit/waker';

const PREFIX = `memtest-${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
const FILL_MB = 64;
/** The container's last step: a node process that keeps running. */
const KEEP = `exec node -e 'setInterval(() => {}, 60000)'`;

const started: Docker.Container[] = [];

/** Runs `script` in a container of the image, and resolves once it has printed READY. */
async function run(name: string, script: string): Promise<Docker.Container> {
  const docker = dockerClient();
  const c = await docker.createContainer({
    Image: await ensurePersonaImage(),
    name: `${PREFIX}-${name}`,
    Entrypoint: ['sh', '-c'],
    Cmd: [script],
    HostConfig: { ShmSize: 4 * FILL_MB * 1024 * 1024 },
  });
  started.push(c);
  await c.start();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const logs = (await c.logs({ stdout: true, stderr: true })).toString();
    if (logs.includes('READY')) break;
    if (Date.now() > deadline) throw new Error(`${name} did not get ready:\n${logs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // Node's start-up settles: three readings in a row (half a second) within 1 MB.
  let previous = (await held(c)).total;
  let steady = 0;
  await until(
    async () => {
      const now = (await held(c)).total;
      steady = Math.abs(now - previous) < 1 ? steady + 1 : 0;
      previous = now;
      return steady >= 2 ? true : null;
    },
    30_000,
    `the memory ${name} holds to settle (three readings within 1 MB)`,
  );
  return c;
}

async function held(c: Docker.Container): Promise<HeldMemory & { total: number }> {
  const pid = (await c.inspect()).State.Pid;
  const h = cgroupHeldMb(pid);
  if (!h) throw new Error(`no memory cgroup found for pid ${pid}`);
  return { ...h, total: h.anon + h.shmem + h.kernel };
}

/** Docker's usage figure (the one `docker stats` starts from): page cache included. */
async function usageMb(c: Docker.Container): Promise<number> {
  const st = (await c.stats({ stream: false })) as { memory_stats: { usage?: number } };
  return (st.memory_stats.usage ?? 0) / 1048576;
}

/** Asserts lo <= value <= hi (MB); a failure prints the value and every reading. */
function expectWithin(what: string, value: number, lo: number, hi: number, report: object): void {
  const inRange = value >= lo && value <= hi;
  expect({ what, mb: Math.round(value * 10) / 10, lo, hi, inRange, report }).toEqual(
    expect.objectContaining({ inRange: true }),
  );
}

afterAll(async () => {
  await Promise.all(started.map((c) => c.remove({ force: true }).catch(() => undefined)));
});

test('anonymous and shared memory count as held, written files do not', async () => {
  const idle = await run('idle', `echo READY; ${KEEP}`);
  const anon = await run(
    'anon',
    `exec node -e 'const b = Buffer.alloc(${FILL_MB} << 20, 1); console.log("READY");` +
      ` setInterval(() => { b[0] += 1; }, 60000)'`,
  );
  const shm = await run(
    'shm',
    `dd if=/dev/urandom of=/dev/shm/fill bs=1M count=${FILL_MB} 2>/dev/null && echo READY; ${KEEP}`,
  );
  const file = await run(
    'file',
    `dd if=/dev/urandom of=/tmp/fill bs=1M count=${FILL_MB} 2>/dev/null && echo READY; ${KEEP}`,
  );
  const base = await held(idle);
  const withAnon = await held(anon);
  const withShm = await held(shm);
  const withFile = await held(file);
  const report = { base, withAnon, withShm, withFile };

  // The buffer is anonymous memory of the container's process.
  expectWithin('anonymous memory added by the buffer', withAnon.anon - base.anon, 60, 76, report);
  // /dev/shm is the container's tmpfs: shared memory, as Chromium's memfd and SysV segments are.
  expectWithin('shared memory added by /dev/shm', withShm.shmem - base.shmem, 63, 65, report);
  expectWithin('held memory added by /dev/shm', withShm.total - base.total, 60, 76, report);
  // A written file is page cache: not held, though Docker's usage counts it.
  expectWithin('held memory added by the file', withFile.total - base.total, -8, 8, report);
  // The control: Docker's usage of that container counts the file (and any code it was first
  // to read: page cache is charged to the first reader).
  const cached = (await usageMb(file)) - withFile.total;
  expectWithin("Docker's usage beyond held memory", cached, FILL_MB - 4, 4096, report);
}, 240_000);
