/**
 * What a Swarm test cluster leaves when its process dies before teardown (a test run killed, a
 * machine stopped mid-run): this engine still in the swarm, worker engines running in their
 * namespaces, the bridge, the FORWARD rule and the run's folder. The next cluster clears it,
 * but only a cluster of the test kit's: its manager node carries RUN_LABEL, set when the swarm
 * was made. A swarm without it is someone else's, and is refused untouched.
 */
import fs from 'node:fs';
import { listed, runCommand } from './command';
import { descendantsOf, killQuietly, pidsMatching } from './procs';

/** The manager node's label naming the run that made the swarm. */
export const RUN_LABEL = 'persona-browser.testkit.run';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const docker = (args: string[], timeoutMs?: number): Promise<string> =>
  runCommand('docker', args, { timeoutMs });

/** The run that made the swarm this engine is in, from its node's label; null when unlabeled
 * (or when the engine cannot tell: not a manager, no swarm). */
export async function swarmRunId(): Promise<string | null> {
  const format = `{{index .Spec.Labels "${RUN_LABEL}"}}`;
  const label = await docker(['node', 'inspect', 'self', '--format', format]).catch(() => '');
  const id = label.trim();
  return /^sw[0-9a-f]{6}$/.test(id) ? id : null;
}

/**
 * Removes docker_gwbridge, the bridge Swarm makes for its ingress, once this engine has left the
 * swarm. A leave that comes while the ingress is still being set up leaves the ingress sandbox's
 * endpoint on it for good ("has active endpoints"): after a few tries it is disconnected by force.
 */
export async function removeGatewayBridge(): Promise<void> {
  const ls = ['network', 'ls', '-q', '--filter', 'name=^docker_gwbridge$'];
  for (let i = 0; listed(await docker(ls)).length; i++) {
    const rm = docker(['network', 'rm', 'docker_gwbridge']);
    if (i === 20) return void (await rm);
    await rm.catch(async () => {
      if (i >= 4) {
        const stale = ['network', 'disconnect', '-f', 'docker_gwbridge', 'gateway_ingress-sbox'];
        await docker(stale).catch(() => '');
      }
      await sleep(500);
    });
  }
}

/**
 * Removes everything the dead run `runId` left, each step whatever the ones before did: its
 * services and their tasks, its containers, the swarm (this engine leaves it), the worker
 * engines and what runs under them, their mounts and folders, namespaces, links and the rule.
 * Resolves with what it removed, for the log; rejects naming the steps that failed.
 */
export async function clearLeftoverCluster(runId: string): Promise<string[]> {
  const removed: string[] = [];
  const problems: string[] = [];
  const step = async (what: string, body: () => Promise<boolean>): Promise<void> => {
    await body().then(
      (did) => did && removed.push(what),
      (err: unknown) =>
        problems.push(`${what}: ${err instanceof Error ? err.message : String(err)}`),
    );
  };
  await step('services', async () => {
    const ids = listed(await docker(['service', 'ls', '-q']));
    if (ids.length) await docker(['service', 'rm', ...ids]);
    return ids.length > 0;
  });
  await step('containers', async () => {
    const tasks = ['ps', '-aq', '--filter', 'label=com.docker.swarm.service.id'];
    const own = ['ps', '-aq', '--filter', `name=^${runId}-`];
    const ids = [...new Set([...listed(await docker(tasks)), ...listed(await docker(own))])];
    if (ids.length) await docker(['rm', '-f', ...ids], 120_000);
    return ids.length > 0;
  });
  await step('the swarm', async () => {
    await docker(['swarm', 'leave', '-f']);
    await removeGatewayBridge();
    return true;
  });
  const dirs = fs
    .readdirSync('/tmp')
    .filter((name) => name.startsWith(`${runId}-`))
    .map((name) => `/tmp/${name}`);
  await step('worker engines', async () => {
    const pids = dirs.flatMap((dir) => pidsMatching(dir));
    for (const pid of pids) [...descendantsOf(pid), pid].forEach((p) => killQuietly(p));
    for (let i = 0; i < 50 && dirs.some((dir) => pidsMatching(dir).length); i++) await sleep(100);
    return pids.length > 0;
  });
  await step('folders', async () => {
    const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n');
    const paths = mounts.map((l) => l.split(' ')[1] ?? '');
    const under = paths.filter((p) => dirs.some((dir) => p.startsWith(`${dir}/`)));
    for (const p of under.sort().reverse()) await runCommand('umount', ['-l', p]).catch(() => '');
    dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
    return dirs.length > 0;
  });
  await step('namespaces', async () => {
    const names = fs.existsSync('/var/run/netns') ? fs.readdirSync('/var/run/netns') : [];
    const own = names.filter((n) => n.startsWith(`${runId}-`));
    for (const ns of own) await runCommand('ip', ['netns', 'delete', ns]);
    return own.length > 0;
  });
  await step('links', async () => {
    const own = fs.readdirSync('/sys/class/net').filter((n) => n.startsWith(runId));
    // A veth pair goes with its namespace (the kernel may take a moment after the delete): a
    // link gone meanwhile is no failure (seen in CI). The bridge last.
    for (const link of own.sort().reverse()) {
      const gone = (): boolean => !fs.existsSync(`/sys/class/net/${link}`);
      if (gone()) continue;
      await runCommand('ip', ['link', 'delete', link]).catch((err: unknown) => {
        if (!gone()) throw err;
      });
    }
    return own.length > 0;
  });
  await step('the FORWARD rule', async () => {
    const rule = ['FORWARD', '-i', `${runId}br`, '-o', `${runId}br`, '-j', 'ACCEPT'];
    let n = 0;
    while (
      await runCommand('iptables', ['-D', ...rule]).then(
        () => true,
        () => false,
      )
    )
      n++;
    return n > 0;
  });
  if (problems.length) {
    throw new Error(`clearing the leftover cluster ${runId} failed:\n${problems.join('\n')}`);
  }
  return removed;
}

/**
 * Every trace of run `runId` on this machine, one line each ("netns sw1a2b3c-w1", …): its
 * containers and networks on this engine, namespaces, links, FORWARD rules, processes and
 * folders. Empty once the run is gone, whether by its teardown or by clearLeftoverCluster.
 */
export async function tracesOf(runId: string): Promise<string[]> {
  const mine = (names: string[], kind: string): string[] =>
    names.filter((n) => n.includes(runId)).map((n) => `${kind} ${n}`);
  const containers = listed(await docker(['ps', '-a', '--format', '{{.Names}}']));
  const networks = listed(await docker(['network', 'ls', '--format', '{{.Name}}']));
  const netns = fs.existsSync('/var/run/netns') ? fs.readdirSync('/var/run/netns') : [];
  const rules = listed(await runCommand('iptables', ['-S', 'FORWARD']));
  const folders = fs.readdirSync('/tmp').filter((n) => n.startsWith(`${runId}-`));
  const processes = folders.flatMap((n) => pidsMatching(`/tmp/${n}`).map(String));
  return [
    ...mine(containers, 'container'),
    ...mine(networks, 'network'),
    ...mine(netns, 'netns'),
    ...mine(fs.readdirSync('/sys/class/net'), 'link'),
    ...mine(rules, 'rule'),
    ...processes.map((pid) => `process ${pid}`),
    ...folders.map((n) => `folder /tmp/${n}`),
  ];
}
