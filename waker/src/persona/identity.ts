import type { ProxyIdentity } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import { errnoCode, errorMessage } from '@persona-browser/service-kit';
import type { IdentitySettings } from '../config';
import type { Address } from '../drivers/types';
import { makeIdentity, readIdentityFile, removeIdentity, writeIdentity } from '../identity';
import type { ProxyStatus } from '../identity';
import { ProxyErrorReadings } from '../identity';
import type { WorkerPings } from './pings';
import type { PersonaSpec } from './folders';

/**
 * The proxy identity a persona's worker wears (a persona with PROXY_COUNTRY), and the worker's
 * `proxy_errors` as read from its pings. A new one is made at each wake.
 */
export class PersonaIdentity {
  /** The identity the current (or last) worker wears; null without PROXY_COUNTRY. */
  private current: ProxyIdentity | null = null;
  private readonly proxyErrors = new ProxyErrorReadings();

  constructor(
    private readonly spec: PersonaSpec,
    private readonly settings: IdentitySettings | null | undefined,
    private readonly log: () => Logger,
  ) {}

  /** Whether this persona wears a proxy identity at all. */
  get used(): boolean {
    return Boolean(this.spec.proxyCountry);
  }

  /**
   * A fresh identity (a new session) written into the persona folder before the worker starts.
   * On failure no identity file stays behind (an old one would be a dead session) and the
   * error says why; the worker must not start.
   */
  async renew(): Promise<void> {
    this.proxyErrors.reset();
    const country = this.spec.proxyCountry;
    if (!country) return;
    const settings = this.settings;
    try {
      if (!settings?.proxyUsername || !settings.proxyPassword) {
        throw new Error(
          'PROXY_USERNAME and PROXY_PASSWORD must be set in the waker for PROXY_COUNTRY',
        );
      }
      const identity = await makeIdentity({
        country,
        proxyServer: settings.proxyServer,
        usernameTemplate: settings.usernameTemplate,
        username: settings.proxyUsername,
        password: settings.proxyPassword,
        geoipBaseUrl: settings.geoipBaseUrl,
        geoipToken: settings.geoipToken,
      });
      writeIdentity(this.spec.dir, identity);
      this.current = identity;
      this.log().info('proxy identity made', {
        country: identity.country,
        session: identity.session,
        exit_ip: identity.exit_ip,
        timezone: identity.timezone,
        locale: identity.locale,
      });
    } catch (err) {
      this.current = null;
      try {
        removeIdentity(this.spec.dir);
      } catch (rmErr) {
        this.log().error('cannot remove the old proxy identity', {
          error: errnoCode(rmErr) ?? String(rmErr),
        });
      }
      throw new Error(`proxy identity failed: ${errorMessage(err)}`);
    }
  }

  /** A worker taken over wears the identity in its folder. */
  adopt(): void {
    if (this.used) this.current = readIdentityFile(this.spec.dir);
  }

  /** A reading of the worker's `proxy_errors`; whether the proxy now looks failing. */
  record(proxyErrors: number | null): boolean {
    if (!this.used) return false;
    this.proxyErrors.record(proxyErrors);
    return this.proxyErrors.failing;
  }

  /**
   * Reads `proxy_errors` from the worker's ping (with the health checks): nothing else pings a
   * running worker. One ping at a time; a failed one keeps the last reading.
   */
  readProxyErrors(
    pings: WorkerPings,
    address: Address,
    stillRunning: () => boolean,
    timeoutMs: number,
  ): void {
    if (pings.busy || !this.used) return;
    pings.send(
      address,
      (ping) => {
        if (stillRunning() && this.record(ping.proxy_errors))
          this.log().warn('proxy failing', { proxy_errors: ping.proxy_errors });
      },
      () => undefined,
      timeoutMs,
    );
  }

  /** The worker is down: its readings go with it. */
  workerGone(): void {
    this.proxyErrors.reset();
  }

  /** The persona's proxy for the API: never a credential. Null without PROXY_COUNTRY. */
  status(): ProxyStatus | null {
    const country = this.spec.proxyCountry;
    if (!country) return null;
    return {
      country,
      exit_ip: this.current?.exit_ip ?? null,
      session: this.current?.session ?? null,
      proxy_errors: this.proxyErrors.value,
      failing: this.proxyErrors.failing,
    };
  }
}
