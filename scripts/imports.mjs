// Who imports whom among the workspaces, measured from the code (docs/architecture.md: Imports):
// `node scripts/imports.mjs`. Per workspace, the @ukiyo packages its sources import (tests
// apart), and every import that reaches into another workspace's files by relative path.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const { workspaces } = JSON.parse(readFileSync('package.json', 'utf8'));
const names = new Map(
  workspaces.map((dir) => [dir, JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name]),
);
const IMPORT = /(?:from|import\(?)\s*'([^']+)'/g;

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(m?ts|tsx|mjs)$/.test(entry.name)) yield path;
  }
}

const ownerOf = (file) => workspaces.find((dir) => file === dir || file.startsWith(`${dir}/`));
for (const dir of workspaces) {
  const used = { src: new Set(), test: new Set() };
  const reaches = [];
  for (const file of sources(dir)) {
    const kind = /(^|\/)test\/|\.test\.tsx?$|\.spec\.ts$/.test(relative(dir, file)) ? 'test' : 'src';
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (spec.startsWith('@ukiyo/')) used[kind].add(spec.split('/').slice(0, 2).join('/'));
      if (!spec.startsWith('.')) continue;
      const owner = ownerOf(relative('.', resolve(dirname(file), spec)));
      if (owner !== dir) reaches.push(`${file} -> ${spec}`);
    }
  }
  const list = (set) =>
    [...set]
      .filter((name) => name !== names.get(dir))
      .sort()
      .join(', ') || '-';
  console.log(`${dir} (${names.get(dir)}): src ${list(used.src)}; tests also ${list(used.test)}`);
  for (const reach of reaches) console.log(`  by relative path: ${reach}`);
}
