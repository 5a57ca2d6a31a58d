import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { FLEET_PREFIX } from '../metrics/prometheus';
import type { SiteChecks } from './schedule';

/**
 * The site checks' gauges in the waker's registry, read from their owner at scrape time:
 * per persona and family, the items missing at the last run, whether it passed, and when.
 */
export function registerSiteCheckMetrics(registry: Registry, checks: SiteChecks): void {
  const each = (
    g: Gauge<'persona' | 'family'>,
    value: (o: ReturnType<SiteChecks['all']>[number]['outcomes'][number]) => number,
  ): void => {
    g.reset();
    for (const p of checks.all()) {
      for (const o of p.outcomes) g.set({ persona: p.persona, family: o.family }, value(o));
    }
  };
  const missing: Gauge<'persona' | 'family'> = new Gauge({
    name: `${FLEET_PREFIX}site_check_missing`,
    help: 'Selectors and API keys a family relies on that its last site check did not find',
    labelNames: ['persona', 'family'],
    registers: [registry],
    collect: () => each(missing, (o) => o.missing.length),
  });
  const ok: Gauge<'persona' | 'family'> = new Gauge({
    name: `${FLEET_PREFIX}site_check_ok`,
    help: 'The last site check found every item (1), or missed some or could not run (0)',
    labelNames: ['persona', 'family'],
    registers: [registry],
    collect: () => each(ok, (o) => (o.ok ? 1 : 0)),
  });
  const last: Gauge<'persona' | 'family'> = new Gauge({
    name: `${FLEET_PREFIX}site_check_last_run_timestamp_seconds`,
    help: 'When the last site check of a persona and family ended (Unix time)',
    labelNames: ['persona', 'family'],
    registers: [registry],
    collect: () => each(last, (o) => Date.parse(o.at) / 1000),
  });
}
