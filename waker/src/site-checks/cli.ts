/**
 * `npm run check:sites -- <family> --persona NAME`: runs a family's site check against a
 * persona's worker (through the persona's port on the waker's host, found with the waker's
 * API) or, with `--worker URL`, against a worker directly. Prints a table of every selector
 * and API key, found or missing; exits 1 when something is missing or the check could not run,
 * 2 on bad arguments.
 */
import { SITE_CHECK_ROUTES, formatOutcome, runSiteCheck } from './run';

const USAGE =
  'usage: npm run check:sites -- <family> (--persona NAME [--waker URL] | --worker URL) ' +
  '[--key KEY] [--param name=value ...] [--json]\n' +
  `families: ${Object.keys(SITE_CHECK_ROUTES).join(', ')}; the key defaults to SERVICE_KEY, ` +
  'the waker to http://127.0.0.1:$WAKER_PORT (4900)';

export interface CliArgs {
  family: string;
  persona: string | null;
  worker: string | null;
  waker: string;
  key: string | null;
  params: Record<string, string | number>;
  json: boolean;
}

/** The arguments, or a message saying what is wrong with them. */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs | string {
  const out: CliArgs = {
    family: '',
    persona: null,
    worker: null,
    waker: env.WAKER_URL ?? `http://127.0.0.1:${env.WAKER_PORT ?? '4900'}`,
    key: env.SERVICE_KEY || null,
    params: {},
    json: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i]!;
    const value = (): string | null => (argv[i + 1] === undefined ? null : argv[++i]!);
    if (a === '--json') out.json = true;
    else if (['--persona', '--worker', '--waker', '--key', '--param'].includes(a)) {
      const v = value();
      if (v === null) return `${a} needs a value`;
      if (a === '--persona') out.persona = v;
      else if (a === '--worker') out.worker = v;
      else if (a === '--waker') out.waker = v;
      else if (a === '--key') out.key = v;
      else {
        const eq = v.indexOf('=');
        if (eq < 1) return `--param takes name=value, not ${v}`;
        const raw = v.slice(eq + 1);
        // A number parameter (wait_s) goes as a number; the plugin checks it against its rules.
        out.params[v.slice(0, eq)] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
      }
    } else if (a.startsWith('-')) return `unknown option ${a}`;
    else if (out.family === '') out.family = a;
    else return `one family at a time (got ${out.family} and ${a})`;
  }
  if (out.family === '') return 'which family? the first argument';
  if (!(out.family in SITE_CHECK_ROUTES)) return `unknown family ${out.family}`;
  if ((out.persona === null) === (out.worker === null)) return 'give --persona or --worker';
  return out;
}

/** The persona's worker address: its port on the waker's host. */
async function personaUrl(args: CliArgs, name: string): Promise<string> {
  const headers: Record<string, string> = args.key ? { authorization: `Bearer ${args.key}` } : {};
  const res = await fetch(`${args.waker.replace(/\/+$/, '')}/api/personas`, { headers });
  const body: unknown = await res.json().catch(() => null);
  const list =
    typeof body === 'object' && body !== null && 'personas' in body ? body.personas : null;
  if (!res.ok || !Array.isArray(list))
    throw new Error(`the waker at ${args.waker} answered ${res.status}`);
  const row: unknown = list.find(
    (p: unknown) => typeof p === 'object' && p !== null && 'name' in p && p.name === name,
  );
  if (typeof row !== 'object' || row === null || !('port' in row)) {
    throw new Error(`the waker has no persona ${name}`);
  }
  return `${new URL(args.waker).protocol}//${new URL(args.waker).hostname}:${String(row.port)}`;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), process.env);
  if (typeof args === 'string') {
    process.stderr.write(`${args}\n${USAGE}\n`);
    return 2;
  }
  let url: string;
  try {
    url = args.worker ?? (await personaUrl(args, args.persona!));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const outcome = await runSiteCheck({
    url,
    key: args.key,
    family: args.family,
    params: args.params,
  });
  process.stdout.write(
    args.json ? `${JSON.stringify(outcome, null, 2)}\n` : `${formatOutcome(outcome)}\n`,
  );
  return outcome.ok ? 0 : 1;
}

if (require.main === module) {
  void main().then((code) => {
    process.exitCode = code;
  });
}
