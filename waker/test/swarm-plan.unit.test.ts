/**
 * The Swarm driver's pure decisions: where a new persona goes, what its service holds, which
 * engines take a seccomp profile on a service, how a service is read back, and how persona.env
 * records the node.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NodeRoom } from '../src/drivers/swarm-plan';
import {
  UNLIMITED_PERSONA_MB,
  chooseNode,
  nodeDataDir,
  overlayAnchor,
  personaService,
  serviceSeccompSupported,
  taskPhase,
} from '../src/drivers/swarm-plan';
import { exitOf, readService } from '../src/drivers/swarm-state';
import type { TaskInfo } from '../src/drivers/swarm-state';
import { readPersona } from '../src/persona/folders';
import { recordNode } from '../src/placement/node-record';

const room = (hostname: string, memoryMb: number, over: Partial<NodeRoom> = {}): NodeRoom => ({
  hostname,
  memoryMb,
  ready: true,
  active: true,
  ...over,
});

describe('placement of a new persona', () => {
  test('the node with the most memory left after its running personas', () => {
    const nodes = [room('a', 16_000), room('b', 8_000), room('c', 8_000)];
    expect(chooseNode(nodes, [])).toBe('a');
    // a holds 10 GB of personas: b and c have more left; ties go to the first by name.
    const placed = [
      { node: 'a', memoryMb: 6_000 },
      { node: 'a', memoryMb: 4_000 },
    ];
    expect(chooseNode(nodes, placed)).toBe('b');
    expect(chooseNode(nodes, [...placed, { node: 'b', memoryMb: 1 }])).toBe('c');
  });

  test('a node that is down, drained or paused never takes one; none left is null', () => {
    const nodes = [
      room('big', 64_000, { ready: false }),
      room('drained', 64_000, { active: false }),
      room('small', 2_000),
    ];
    expect(chooseNode(nodes, [])).toBe('small');
    expect(chooseNode(nodes.slice(0, 2), [])).toBeNull();
  });

  test('a persona without a memory limit is counted as UNLIMITED_PERSONA_MB by the driver', () => {
    expect(UNLIMITED_PERSONA_MB).toBeGreaterThanOrEqual(512);
  });
});

describe('the service of a persona', () => {
  const input = {
    fleetId: 'f1',
    persona: 'alice',
    image: 'reg:5000/persona-browser:1',
    env: { A: '1', PORT: '5000' },
    node: 'node-2',
    folder: '/srv/pb/node-2/alice',
    network: 'pb-net',
    memoryLimitMb: 1536,
    cpus: 1.5,
    replicas: 1 as const,
  };

  test('pinned to its node, on the overlay by name (dnsrr), with its folder, limits and shared memory', () => {
    const spec = personaService({ ...input, seccomp: null });
    expect(spec.Name).toBe('pb-f1-alice');
    expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    const task = spec.TaskTemplate;
    if (!task || !('ContainerSpec' in task)) throw new Error('no container spec');
    expect(task.Placement?.Constraints).toEqual(['node.hostname==node-2']);
    expect(task.Networks).toEqual([{ Target: 'pb-net' }]);
    expect(task.RestartPolicy).toEqual({ Condition: 'none' });
    expect(task.Resources?.Limits).toEqual({ MemoryBytes: 1536 * 1024 * 1024, NanoCPUs: 1.5e9 });
    const c = task.ContainerSpec;
    expect(c?.Env).toEqual(['A=1', 'PORT=5000']);
    expect(c?.Mounts?.[0]).toMatchObject({
      Type: 'bind',
      Source: '/srv/pb/node-2/alice',
      Target: '/persona',
    });
    expect(c?.Mounts?.[1]).toMatchObject({ Type: 'tmpfs', Target: '/dev/shm' });
    expect(spec.Labels).toEqual({
      'persona-browser.persona': 'alice',
      'persona-browser.fleet': 'f1',
    });
  });

  test("an engine that takes a profile gets the project's seccomp profile; an older one CAP_SYS_ADMIN", () => {
    const profile = '{"defaultAction":"SCMP_ACT_ALLOW"}';
    const withProfile = personaService({ ...input, seccomp: profile }).TaskTemplate;
    const without = personaService({ ...input, seccomp: null }).TaskTemplate;
    if (
      !withProfile ||
      !('ContainerSpec' in withProfile) ||
      !without ||
      !('ContainerSpec' in without)
    )
      throw new Error('no container spec');
    expect(withProfile.ContainerSpec).toMatchObject({
      Privileges: { Seccomp: { Mode: 'custom', Profile: Buffer.from(profile).toString('base64') } },
    });
    expect(withProfile.ContainerSpec?.CapabilityAdd).toBeUndefined();
    expect(without.ContainerSpec?.CapabilityAdd).toEqual(['CAP_SYS_ADMIN']);
    expect(serviceSeccompSupported('1.41')).toBe(false);
    expect(serviceSeccompSupported('1.43')).toBe(false);
    expect(serviceSeccompSupported('1.44')).toBe(true);
    expect(serviceSeccompSupported('1.47')).toBe(true);
    expect(serviceSeccompSupported('2.0')).toBe(true);
  });

  test('read back from the engine: its persona, node, count and version; another fleet is not ours', () => {
    const raw = {
      ID: 'svc1',
      Version: { Index: 42 },
      Spec: {
        ...personaService({ ...input, seccomp: null }),
        TaskTemplate: {
          ...personaService({ ...input, seccomp: null }).TaskTemplate,
          ForceUpdate: 3,
        },
      },
    };
    expect(readService(raw, 'f1')).toEqual({
      id: 'svc1',
      name: 'pb-f1-alice',
      version: 42,
      persona: 'alice',
      replicas: 1,
      node: 'node-2',
      forceUpdate: 3,
    });
    expect(readService(raw, 'other')).toBeNull();
    expect(readService({ Spec: { Name: 'x' } }, 'f1')).toBeNull();
  });

  test("the overlay's anchor: one idle task on every node, on the overlay, never read as a persona", () => {
    const anchor = overlayAnchor('f1', 'img:1', 'pb-net');
    expect(anchor.Mode).toEqual({ Global: {} });
    const task = anchor.TaskTemplate;
    if (!task || !('ContainerSpec' in task)) throw new Error('no container spec');
    expect(task.Networks).toEqual([{ Target: 'pb-net' }]);
    expect(task.ContainerSpec?.Command).toEqual(['tini', '--', 'sleep', 'infinity']);
    expect(readService({ ID: 'a', Spec: anchor }, 'f1')).toBeNull();
  });

  test('the data folder of a node, and the phases of a task', () => {
    expect(nodeDataDir('/srv/{node}/personas', 'w1')).toBe('/srv/w1/personas');
    expect(nodeDataDir('/var/lib/pb', 'w1')).toBe('/var/lib/pb');
    expect(['pending', 'assigned', 'preparing', 'starting'].map(taskPhase)).toEqual(
      Array(4).fill('starting'),
    );
    expect(taskPhase('running')).toBe('running');
    expect(['complete', 'failed', 'shutdown', 'rejected', 'orphaned'].map(taskPhase)).toEqual(
      Array(5).fill('ended'),
    );
  });
});

describe("a running worker's end, as the driver's watch reads it", () => {
  const task = (state: string, updated: string, over: Partial<TaskInfo> = {}): TaskInfo => ({
    serviceId: 's1',
    nodeId: 'n1',
    state,
    desired: 'running',
    error: '',
    exitCode: null,
    updated,
    ...over,
  });

  test('its node down is the reason, before anything its tasks say', () => {
    const running = [task('running', '2026-01-01T00:00:01Z')];
    expect(exitOf('s1', 'node w2 is down (heartbeat failure)', running)).toEqual({
      code: null,
      reason: 'node w2 is down (heartbeat failure)',
    });
  });

  test('a task running or starting is no end; the latest ended one says why it ended', () => {
    expect(exitOf('s1', null, [task('running', '2026-01-01T00:00:01Z')])).toBeNull();
    expect(exitOf('s1', null, [task('starting', '2026-01-01T00:00:01Z')])).toBeNull();
    const ended = [
      task('shutdown', '2026-01-01T00:00:01Z'),
      task('failed', '2026-01-01T00:00:05Z', { exitCode: 137, error: 'task: non-zero exit (137)' }),
      task('running', '2026-01-01T00:00:09Z', { serviceId: 'other' }),
    ];
    expect(exitOf('s1', null, ended)).toEqual({
      code: 137,
      reason: 'task failed with 137: task: non-zero exit (137)',
    });
    expect(exitOf('s1', null, [])).toEqual({ code: null, reason: 'no task' });
  });
});

describe('NODE in persona.env', () => {
  const folder = (env: string): string => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pb-node-')), 'p1');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'persona.env'), env, { mode: 0o640 });
    return dir;
  };

  test('is read, and a bad one is a problem naming NODE', () => {
    expect(readPersona(folder('PORT=7001\nMODE=always-on\nNODE=w-2.example\n'))).toMatchObject({
      node: 'w-2.example',
    });
    expect(readPersona(folder('PORT=7001\nMODE=always-on\n'))).not.toHaveProperty('node');
    expect(readPersona(folder('PORT=7001\nMODE=always-on\nNODE=a b\n'))).toMatchObject({
      variable: 'NODE',
    });
  });

  test('the placement is added, or replaces the line there, keeping every other line and the mode', () => {
    const added = folder('# mine\nPORT=7001\nMODE=sleepy\nIDLE_TIMEOUT=60');
    recordNode(added, 'w1');
    const file = path.join(added, 'persona.env');
    expect(fs.readFileSync(file, 'utf8')).toBe(
      '# mine\nPORT=7001\nMODE=sleepy\nIDLE_TIMEOUT=60\nNODE=w1\n',
    );
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    const replaced = folder('PORT=7001\nNODE=old\nMODE=always-on\n');
    recordNode(replaced, 'w2');
    expect(fs.readFileSync(path.join(replaced, 'persona.env'), 'utf8')).toBe(
      'PORT=7001\nNODE=w2\nMODE=always-on\n',
    );
    expect(readPersona(replaced)).toMatchObject({ node: 'w2' });
  });
});
