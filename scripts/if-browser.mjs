// Runs the given command only when Debian's Chromium is installed (CI installs it); on a
// machine without it, says so plainly instead of failing the whole test command.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.log(`e2e skipped: ${chromium} not found (apt-get install chromium, or run .ci/run)`);
  process.exit(0);
}
const [cmd, ...args] = process.argv.slice(2);
const result = spawnSync(cmd, args, { stdio: 'inherit' });
process.exit(result.status ?? 1);
