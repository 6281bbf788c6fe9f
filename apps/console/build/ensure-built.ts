// `npm start`'s first step: builds the console only when its sources changed since the build in
// apps/console/dist (see stamp.ts). `npm run build:console` always builds.
import { execFileSync } from 'node:child_process';
import { consoleStamp, DIST, needsBuild, ROOT } from './stamp.ts';

if (needsBuild(DIST, consoleStamp())) {
  const npm = process.env.npm_execpath;
  // Under npm, its own CLI with this Node; alone, the npm on the PATH.
  const [command, args] = npm
    ? [process.execPath, [npm, 'run', 'build:console']]
    : ['npm', ['run', 'build:console']];
  try {
    execFileSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  } catch {
    process.exit(1);
  }
} else {
  console.log('console: unchanged since its last build (apps/console/dist), not rebuilt');
}
