import winston from 'winston';

export type Logger = winston.Logger;

/** JSON lines on stdout; the given secrets (the service key) never reach them. */
export function createLogger(
  secrets: Array<string | null>,
  level = process.env.LOG_LEVEL ?? 'info',
): Logger {
  const known = secrets.filter((s): s is string => Boolean(s && s.length >= 4));
  const scrub = winston.format((info) => {
    const text = JSON.stringify(info);
    if (!known.some((s) => text.includes(s))) return info;
    const cleaned = known.reduce((t, s) => t.split(s).join('[redacted]'), text);
    return Object.assign(info, JSON.parse(cleaned) as object);
  });
  return winston.createLogger({
    level,
    format: winston.format.combine(scrub(), winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
}
