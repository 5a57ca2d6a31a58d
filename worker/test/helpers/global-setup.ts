import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Integration tests run the worker as users do: the built program in its own process. */
export default function globalSetup(): void {
  const root = path.resolve(__dirname, '..', '..', '..');
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}
