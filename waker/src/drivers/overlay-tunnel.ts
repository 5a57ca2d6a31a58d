import crypto from 'node:crypto';
import type http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { HostPort } from '@persona-browser/contracts';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import { WorkerAgent } from './worker-agent';
import { DriverError } from './types';

/** Inside the gateway's container (waker/src/gateway/main.ts). */
export const GATEWAY_PORT = 7070;

/**
 * Connections to workers on the overlay, through the gateway: each one opens a TCP connection
 * to the gateway and names its target in the first line. Keep-alive and every HTTP feature
 * work as over a direct connection; WebSocket upgrades too (the bytes are copied as they are).
 */
export class TunnelAgent extends WorkerAgent {
  constructor(
    private readonly gateway: () => HostPort,
    private readonly token: string,
    options: http.AgentOptions = {},
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs): Duplex {
    const target = `${options.host ?? options.hostname ?? ''} ${Number(options.port)}`;
    const gw = this.gateway();
    const socket = net.connect({ host: gw.host, port: gw.port });
    socket.setNoDelay(true);
    socket.write(`${this.token} ${target}\n`);
    return socket;
  }
}

export interface GatewayOptions {
  docker: Docker;
  image: string;
  /** Container name, one per fleet. */
  name: string;
  network: string;
  labels: Record<string, string>;
}

/**
 * The gateway container on the manager: on the default bridge (which this host reaches) and on
 * the fleet's overlay. Made afresh with a new token at each start of the waker.
 */
export class OverlayGateway {
  readonly token = crypto.randomBytes(24).toString('hex');
  private address: HostPort | null = null;

  constructor(private readonly opts: GatewayOptions) {}

  /** Where the gateway listens; throws before `start`. */
  current(): HostPort {
    if (!this.address) throw new DriverError('the overlay gateway is not running');
    return this.address;
  }

  async start(): Promise<HostPort> {
    const { docker, name } = this.opts;
    await docker
      .getContainer(name)
      .remove({ force: true })
      .catch(() => undefined);
    let container: Docker.Container;
    try {
      container = await docker.createContainer({
        name,
        Image: this.opts.image,
        Cmd: ['node', '/app/waker/dist/gateway/main.js'],
        Env: [`GATEWAY_TOKEN=${this.token}`, `GATEWAY_PORT=${GATEWAY_PORT}`],
        Labels: this.opts.labels,
        HostConfig: { RestartPolicy: { Name: 'unless-stopped' }, NetworkMode: 'bridge' },
      });
      await docker.getNetwork(this.opts.network).connect({ Container: container.id });
      await container.start();
    } catch (err) {
      throw new DriverError(`cannot start the overlay gateway ${name}: ${errorMessage(err)}`);
    }
    const info = await container.inspect();
    const bridge = info.NetworkSettings.Networks.bridge;
    if (!bridge?.IPAddress) throw new DriverError(`gateway ${name} has no address on the bridge`);
    this.address = { host: bridge.IPAddress, port: GATEWAY_PORT };
    await waitListening(this.address, 15_000);
    return this.address;
  }

  /** Running, and still at its address; started again when it is not. */
  async check(): Promise<void> {
    const info: unknown = await this.opts.docker
      .getContainer(this.opts.name)
      .inspect()
      .catch(() => null);
    const state = isRecord(info) && isRecord(info.State) ? info.State : null;
    if (state?.Running === true) return;
    await this.start();
  }

  async stop(): Promise<void> {
    await this.opts.docker
      .getContainer(this.opts.name)
      .remove({ force: true })
      .catch(() => undefined);
    this.address = null;
  }
}

/** Polls until a TCP connection to `address` is accepted. */
async function waitListening(address: HostPort, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(address);
      s.setTimeout(1_000, () => s.destroy());
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      s.once('close', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new DriverError(`the overlay gateway never listened`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
