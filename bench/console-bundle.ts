// The JavaScript a browser must fetch before the console's first route renders: the entry
// module and everything index.html preloads. Target (issue 2): <= 180 KB gzip.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { report, ROOT } from './lib.ts';

const dist = join(ROOT, 'apps/console/dist');
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const scripts = [
  ...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="([^"]+\.js)"/g),
].map((match) => match[1]!);
const gzipBytes = scripts.reduce((total, src) => total + gzipSync(readFileSync(join(dist, src))).length, 0);
report(
  'console-bundle',
  { initialJsGzipKB: Math.round(gzipBytes / 102.4) / 10, files: scripts.length },
  {
    initialJsGzipKB: '<= 180',
  },
);
