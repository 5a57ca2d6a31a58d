import { spawn } from 'node:child_process';
import { groupEnded, runningInGroup } from '../src/browser/process-group';

/** A process group of a shell and two children, as a browser and its helpers make one. */
function startGroup(): { pid: number; end: () => void } {
  const child = spawn('sh', ['-c', 'sleep 60 & sleep 60 & wait'], {
    detached: true,
    stdio: 'ignore',
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('sh did not start');
  return { pid, end: () => process.kill(-pid, 'SIGKILL') };
}

async function counted(pgid: number, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (runningInGroup(pgid) !== n) {
    if (Date.now() > until) throw new Error(`group ${pgid} never had ${n} processes running`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('counts the running processes of a group, and none once it is killed', async () => {
  const g = startGroup();
  await counted(g.pid, 3);
  g.end();
  await counted(g.pid, 0);
});

test('waits for a group to end: false at the deadline while it runs, true once it has ended', async () => {
  const g = startGroup();
  await counted(g.pid, 3);
  // The control: a group that runs on is not taken for ended.
  expect(await groupEnded(g.pid, Date.now() + 300)).toBe(false);
  setTimeout(g.end, 200);
  expect(await groupEnded(g.pid, Date.now() + 10_000)).toBe(true);
});

test('a group that never was has no process running', () => {
  expect(runningInGroup(2 ** 22 + 12345)).toBe(0);
});
