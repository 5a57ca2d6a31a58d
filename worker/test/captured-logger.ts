import { PassThrough } from 'node:stream';
import winston from 'winston';
import type { Logger } from '@persona-browser/service-kit';
import { createLogger } from '@persona-browser/service-kit';

/**
 * The worker's logger (redacting `secrets`) whose JSON lines go to `lines` instead of the
 * console, for tests that read what the worker logged.
 */
export function capturedLogger(secrets: string[], lines: Array<Record<string, unknown>>): Logger {
  const logger = createLogger({ secrets, level: 'info' });
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  for (const t of logger.transports) t.silent = true;
  logger.add(new winston.transports.Stream({ stream }));
  return logger;
}
