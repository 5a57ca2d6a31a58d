import { claimProfile, releaseProfile } from '../browser/profile-lock';
import { errorMessage } from '../errors';
import type { ProxyRelay } from '../identity/relay';
import { startRelay } from '../identity/relay';
import type { StartupStep } from './plan';
import type { WorkerSettings } from './settings';

/**
 * The persona is this worker's before anything else starts: one held by another live worker
 * is refused here, and a browser left by a dead one is cleared.
 */
export const profileStep: StartupStep<Pick<WorkerSettings, 'config'>, { profileDir: string }> = {
  name: 'profile',
  async start({ config }) {
    await claimProfile(config.profileDir);
    return { profileDir: config.profileDir };
  },
  stop: ({ profileDir }) => releaseProfile(profileDir),
};

/** Every browser request goes through the relay, which adds the session's credentials. */
export const proxyRelayStep: StartupStep<
  Pick<WorkerSettings, 'identity' | 'logger'>,
  { relay: ProxyRelay | null }
> = {
  name: 'proxy relay',
  async start({ identity, logger }) {
    if (!identity) return { relay: null };
    const relay = await startRelay({
      ...identity.proxy,
      upstream: identity.proxy.server,
      logger,
    }).catch((err: unknown) => {
      throw new Error(`cannot start the proxy relay: ${errorMessage(err)}`);
    });
    logger.info('proxy identity applied', {
      upstream: new URL(identity.proxy.server).host,
      session: identity.session,
      exit_ip: identity.exit_ip,
      country: identity.country,
      timezone: identity.timezone,
      locale: identity.locale,
      relay_port: relay.port,
    });
    return { relay };
  },
  stop: ({ relay }) => relay?.close(),
};
