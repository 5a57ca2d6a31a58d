import type { SupervisorLogEntry } from '@persona-browser/contracts';
import type { Logger, SecretValues } from '@persona-browser/service-kit';
import { redactUrlSecrets } from '@persona-browser/service-kit';

/**
 * The update log: every step is a JSON log line, and the latest ones are kept for the status
 * route and the fleet panel.
 */
export class UpdateLog {
  private readonly entries: SupervisorLogEntry[] = [];

  constructor(
    private readonly logger: Logger,
    /** What the log lines hide, hidden from the kept entries too (the status shows them). */
    private readonly secrets: SecretValues,
    private readonly keep = 200,
  ) {}

  say(level: SupervisorLogEntry['level'], message: string, meta: object = {}): void {
    this.logger.log(level, message, meta);
    const shown = redactUrlSecrets(this.secrets.redact(message));
    this.entries.push({ at: new Date().toISOString(), level, message: shown });
    if (this.entries.length > this.keep) this.entries.shift();
  }

  info(message: string, meta?: object): void {
    this.say('info', message, meta);
  }

  warn(message: string, meta?: object): void {
    this.say('warn', message, meta);
  }

  error(message: string, meta?: object): void {
    this.say('error', message, meta);
  }

  latest(n = 50): SupervisorLogEntry[] {
    return this.entries.slice(-n);
  }
}
