import winston from 'winston';
import type { SupervisorLogEntry } from '@persona-browser/contracts';

export type Logger = winston.Logger;

/** JSON lines on stdout, as the waker and the workers write them. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service: 'supervisor' },
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}

/**
 * The update log: every step is a JSON log line, and the latest ones are kept for the status
 * route and the fleet panel.
 */
export class UpdateLog {
  private readonly entries: SupervisorLogEntry[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly keep = 200,
  ) {}

  say(level: SupervisorLogEntry['level'], message: string, meta: object = {}): void {
    this.logger.log(level, message, meta);
    this.entries.push({ at: new Date().toISOString(), level, message });
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
