// Type-checks every workspace with its own tsconfig (the console needs DOM types, the
// servers must not see them), stopping at the first failure.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const { workspaces } = JSON.parse(readFileSync('package.json', 'utf8'));
for (const dir of workspaces) {
  if (!existsSync(`${dir}/tsconfig.json`)) continue;
  process.stdout.write(`typecheck ${dir}\n`);
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', dir], { stdio: 'inherit' });
  } catch {
    process.exit(1);
  }
}
