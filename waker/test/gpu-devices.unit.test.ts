/**
 * GPU=dri in a persona's environment: the docker driver's container carries the render node's
 * folder as a device; a Swarm service, which cannot take devices, is refused with the way out.
 * (No GPU on the test machine: that Chromium then draws on it is not testable here.)
 */
import { personaService, serviceProblem } from '../src/drivers/swarm-plan';
import { DRI_DEVICE, containerDevices } from '../src/drivers/worker-container';

describe('the render node for GPU=dri', () => {
  test('the docker container of a GPU=dri persona gets /dev/dri as a device; others get none', () => {
    expect(containerDevices({ GPU: 'dri', PORT: '5000' })).toEqual([
      { PathOnHost: DRI_DEVICE, PathInContainer: '/dev/dri', CgroupPermissions: 'rwm' },
    ]);
    expect(containerDevices({ PORT: '5000' })).toEqual([]);
    expect(containerDevices({ GPU: 'none' })).toEqual([]);
  });

  test('a Swarm service is refused GPU=dri, naming why and what to do; without it, no problem', () => {
    expect(serviceProblem({ GPU: 'dri' })).toMatch(
      /Swarm service.*takes? no devices.*docker driver/,
    );
    expect(serviceProblem({})).toBeNull();
    expect(serviceProblem({ GPU: 'none' })).toBeNull();
  });

  test('a service spec never carries a device or /dev/dri (what the refusal stands in for)', () => {
    const spec = personaService({
      fleetId: 'f',
      persona: 'p',
      image: 'img',
      env: { PORT: '5000' },
      node: 'n1',
      folder: '/data/p',
      network: 'net',
      memoryLimitMb: null,
      cpus: null,
      seccomp: null,
      replicas: 1,
    });
    expect(JSON.stringify(spec)).not.toMatch(/dev\/dri|Devices/);
  });
});
