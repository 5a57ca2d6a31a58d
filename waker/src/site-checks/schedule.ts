import fs from 'node:fs';
import path from 'node:path';
import cron from 'node-cron';
import type { ScheduledTask } from 'node-cron';
import type { Logger } from '@persona-browser/service-kit';
import { parseEnvFile } from '@persona-browser/service-kit';
import type { SiteCheckOutcome, SiteCheckRun } from './run';
import { SITE_CHECK_ROUTES, runSiteCheck } from './run';

/** One scheduled check of a persona: `social?handle=natgeo@0 6 * * *` in SITE_CHECKS. */
export interface ScheduledCheck {
  family: string;
  params: Record<string, string | number>;
  /** node-cron's expression: five fields, or six with seconds first. */
  cron: string;
}

/** A persona's checks as the API answers them. */
export interface PersonaSiteChecks {
  persona: string;
  schedule: ScheduledCheck[];
  /** SITE_CHECKS could not be read: why (the persona runs, without checks). */
  error: string | null;
  /** The newest outcome per family, in the order the families ran first. */
  outcomes: SiteCheckOutcome[];
  /** Families whose check runs now. */
  running: string[];
}

/**
 * SITE_CHECKS: checks separated by `;`, each `family[?name=value&…]@cron`. The parameters
 * are the check plugin's (a number is sent as a number). A string says what is wrong.
 */
export function parseSiteChecks(value: string): ScheduledCheck[] | string {
  const out: ScheduledCheck[] = [];
  for (const entry of value
    .split(';')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf('@');
    if (at < 1) return `"SITE_CHECKS" entry "${entry}" must be family@cron`;
    const [family = '', query = ''] = entry.slice(0, at).trim().split('?', 2);
    const expression = entry.slice(at + 1).trim();
    if (!(family in SITE_CHECK_ROUTES)) {
      return `"SITE_CHECKS" names family "${family}": one of ${Object.keys(SITE_CHECK_ROUTES).join(', ')}`;
    }
    if (!cron.validate(expression)) {
      return `"SITE_CHECKS" entry "${entry}": "${expression}" is not a cron expression`;
    }
    const params: Record<string, string | number> = {};
    for (const [k, v] of new URLSearchParams(query)) {
      params[k] = /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
    }
    out.push({ family, params, cron: expression });
  }
  return out;
}

/** A persona as the checks need it: its name, folder (persona.env) and port. */
export interface CheckedPersona {
  name: string;
  dir: string;
  port: number;
}

export interface SiteChecksOptions {
  personas: () => CheckedPersona[];
  serviceKey: string | null;
  logger: Logger;
  /** Where the personas' ports are served (the waker's host). */
  host?: string;
  /** Runs one check (the real one by default). */
  run?: (r: SiteCheckRun) => Promise<SiteCheckOutcome>;
}

interface PersonaEntry {
  persona: CheckedPersona;
  schedule: ScheduledCheck[];
  error: string | null;
  outcomes: Map<string, SiteCheckOutcome>;
  running: Map<string, Promise<SiteCheckOutcome>>;
}

/**
 * The personas' site checks: read from each persona.env's SITE_CHECKS at start, run on their
 * cron schedules (and on demand) through the persona's port, the newest outcome kept per
 * persona and family. The one owner of the outcomes: the API and the metrics read them here.
 */
export class SiteChecks {
  private readonly entries = new Map<string, PersonaEntry>();
  private readonly tasks: ScheduledTask[] = [];

  constructor(private readonly o: SiteChecksOptions) {}

  start(): void {
    for (const persona of this.o.personas()) {
      const read = readSchedule(persona.dir);
      const entry: PersonaEntry = {
        persona,
        schedule: typeof read === 'string' ? [] : read,
        error: typeof read === 'string' ? read : null,
        outcomes: new Map(),
        running: new Map(),
      };
      this.entries.set(persona.name, entry);
      if (entry.error)
        this.o.logger.warn('site checks not scheduled', {
          persona: persona.name,
          error: entry.error,
        });
      for (const check of entry.schedule) {
        const task = cron.schedule(
          check.cron,
          async () => {
            await this.runNow(persona.name, check.family);
          },
          { name: `site-check-${persona.name}-${check.family}`, noOverlap: true },
        );
        this.tasks.push(task);
      }
    }
  }

  stop(): void {
    for (const t of this.tasks.splice(0)) void t.destroy();
  }

  /** Runs `family`'s check on `persona` now (joining a run under way); undefined: no such persona. */
  runNow(name: string, family: string): Promise<SiteCheckOutcome> | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    const under = entry.running.get(family);
    if (under) return under;
    const params = entry.schedule.find((c) => c.family === family)?.params ?? {};
    const run = (this.o.run ?? runSiteCheck)({
      url: `http://${this.o.host ?? '127.0.0.1'}:${entry.persona.port}`,
      key: this.o.serviceKey,
      family,
      params,
    }).then((outcome) => {
      entry.outcomes.set(family, outcome);
      entry.running.delete(family);
      const fields = {
        persona: name,
        family,
        ok: outcome.ok,
        missing: outcome.missing,
        error: outcome.error,
        debug_id: outcome.debug_id,
      };
      if (outcome.ok) this.o.logger.info('site check passed', fields);
      else this.o.logger.warn('site check failed', fields);
      return outcome;
    });
    entry.running.set(family, run);
    return run;
  }

  status(name: string): PersonaSiteChecks | undefined {
    const e = this.entries.get(name);
    if (!e) return undefined;
    return {
      persona: name,
      schedule: e.schedule,
      error: e.error,
      outcomes: [...e.outcomes.values()],
      running: [...e.running.keys()],
    };
  }

  all(): PersonaSiteChecks[] {
    return [...this.entries.keys()].flatMap((n) => this.status(n) ?? []);
  }
}

/** A persona's SITE_CHECKS from its persona.env: none when unset. */
function readSchedule(dir: string): ScheduledCheck[] | string {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'persona.env'), 'utf8');
  } catch {
    return [];
  }
  const value = parseEnvFile(text).SITE_CHECKS;
  return value ? parseSiteChecks(value) : [];
}
