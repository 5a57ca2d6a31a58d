import StealthPlugin from 'puppeteer-extra-plugin-stealth';
import { STEALTH_EVASIONS } from '../src/browser/launch';
import { presenceLaunch } from '../src/identity/apply';
import type { Signal } from '@persona-browser/testkit/detector-site';
import { startDetectorSite } from '@persona-browser/testkit/detector-site';
import { withBenchBrowser } from './scratch-browser';
import type { BenchSection, Row } from './section';

/**
 * Section `evasions`: which of the stealth plugin's evasions help a headed browser. The worker's
 * own launch (its switches, no Runtime domain, its display with a work area) is run with each
 * set of evasions against the detector pages the tests use: this product's named checks, BotD
 * and fpscanner. A row counts what the pages flagged (fewer is better) and names it; the
 * worker enables STEALTH_EVASIONS.
 */

interface Outcome {
  flagged: string[];
}

async function visit(evasions: readonly string[]): Promise<Outcome> {
  const site = await startDetectorSite();
  // A persona at home sets its zone; the machine's UTC would be flagged by every set alike.
  const presence = presenceLaunch({ timezone: 'Europe/Berlin', locale: null });
  const launch = { evasions, extraArgs: presence.args, extraEnv: presence.env };
  try {
    return await withBenchBrowser('pb-evasions-', launch, async (browser) => {
      // A new tab, as the worker's pool makes them: the evasions' page scripts apply to it.
      const page = await browser.newPage();
      const flagged: string[] = [];
      await page.goto(`${site.url}/own`);
      for (const s of await site.waitFor<Signal[]>('own')) if (!s.pass) flagged.push(s.name);
      await page.goto(`${site.url}/botd`);
      const botd = await site.waitFor<{ bot: boolean; flagged: string[] }>('botd');
      for (const f of botd.flagged ?? []) flagged.push(`botd:${f}`);
      if (botd.bot && !botd.flagged?.length) flagged.push('botd:bot');
      await page.goto(`${site.url}/fpscanner`);
      const fp = await site.waitFor<{ details: Record<string, { detected: boolean }> }>(
        'fpscanner',
      );
      for (const [k, v] of Object.entries(fp.details ?? {}))
        if (v.detected) flagged.push(`fpscanner:${k}`);
      return { flagged };
    });
  } finally {
    await site.close();
  }
}

export const evasionsSection: BenchSection = {
  id: 'evasions',
  title: 'Stealth evasions against the detector pages (signals flagged; fewer is better)',
  run: async (ctx) => {
    const all = [...StealthPlugin().availableEvasions].sort();
    const chosen = [...STEALTH_EVASIONS];
    const sets: Array<{ key: string; label: string; evasions: string[] }> = [
      { key: 'chosen', label: `the worker's: ${chosen.join(', ')}`, evasions: chosen },
      { key: 'none', label: 'none', evasions: [] },
      { key: 'all', label: 'all (the plugin as it comes)', evasions: all },
      ...chosen.map((e) => ({
        key: `without_${e}`,
        label: `the worker's without ${e}`,
        evasions: chosen.filter((x) => x !== e),
      })),
      ...all
        .filter((e) => !chosen.includes(e))
        .map((e) => ({ key: `plus_${e}`, label: `the worker's + ${e}`, evasions: [...chosen, e] })),
    ];
    const rows: Row[] = [];
    let baseline: Set<string> | null = null;
    for (const set of sets) {
      ctx.progress(`evasions: ${set.label}`);
      const { flagged } = await visit(set.evasions);
      baseline ??= new Set(flagged);
      const base = baseline;
      const added = flagged.filter((f) => !base.has(f));
      const removed = [...base].filter((f) => !flagged.includes(f));
      rows.push({
        key: `evasions.${set.key}.flagged`,
        label: set.label,
        value: flagged.length,
        unit: '',
        digits: 0,
        detail:
          set.key === 'chosen'
            ? flagged.join(', ') || 'nothing flagged'
            : [
                added.length ? `adds ${added.join(', ')}` : '',
                removed.length ? `clears ${removed.join(', ')}` : '',
              ]
                .filter(Boolean)
                .join('; ') || 'same as the worker’s',
      });
    }
    return rows;
  },
};
