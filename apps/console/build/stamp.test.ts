import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consoleStamp, needsBuild, STAMP_FILE } from './stamp.ts';

function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'ukiyo-stamp-'));
  const files: Record<string, string> = {
    'apps/console/src/main.tsx': 'render()',
    'apps/console/src/app/router.tsx': 'routes',
    'apps/console/index.html': '<div id="root"></div>',
    'apps/console/package.json': '{}',
    'apps/console/vite.config.ts': 'export default {}',
    'packages/contract/src/messages.ts': 'export const MESSAGES = {}',
    'packages/contract/package.json': '{}',
    'package-lock.json': '{"lockfileVersion":3}',
    'apps/server/src/main.ts': 'server',
  };
  for (const [path, text] of Object.entries(files)) write(root, path, text);
  return root;
}

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('consoleStamp', () => {
  it('changes with the console’s sources, its settings, the contract and the lockfile', () => {
    const root = checkout();
    const before = consoleStamp(root, {});
    expect(consoleStamp(root, {})).toBe(before);
    for (const path of [
      'apps/console/src/app/router.tsx',
      'apps/console/src/features/new-page.tsx',
      'apps/console/vite.config.ts',
      'apps/console/package.json',
      'packages/contract/src/messages.ts',
      'package-lock.json',
    ]) {
      const root = checkout();
      write(root, path, 'changed');
      expect(consoleStamp(root, {}), path).not.toBe(before);
    }
    const removed = checkout();
    rmSync(join(removed, 'apps/console/src/app/router.tsx'));
    expect(consoleStamp(removed, {})).not.toBe(before);
  });

  it('ignores what no build reads: tests, other apps, environment other than VITE_', () => {
    const root = checkout();
    const before = consoleStamp(root, {});
    write(root, 'apps/console/src/app/router.test.tsx', 'test');
    write(root, 'packages/contract/src/messages.test.ts', 'test');
    write(root, 'apps/server/src/main.ts', 'changed');
    expect(consoleStamp(root, { PORT: '1234' })).toBe(before);
    expect(consoleStamp(root, { VITE_SERVICE_SITE_URL: 'https://example.com/' })).not.toBe(before);
  });
});

describe('needsBuild', () => {
  const stamp = 'a'.repeat(64);
  const dist = (files: Record<string, string>) => {
    const directory = mkdtempSync(join(tmpdir(), 'ukiyo-dist-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
    return directory;
  };

  it('skips the build only when a complete build of the same sources is there', () => {
    expect(needsBuild(dist({ 'index.html': '', [STAMP_FILE]: `${stamp}\n` }), stamp)).toBe(false);
  });

  it('builds when there is no build, no stamp (an interrupted build) or another stamp', () => {
    expect(needsBuild(join(tmpdir(), 'ukiyo-never-built'), stamp)).toBe(true);
    expect(needsBuild(dist({ 'index.html': '' }), stamp)).toBe(true);
    expect(needsBuild(dist({ [STAMP_FILE]: stamp }), stamp)).toBe(true);
    expect(needsBuild(dist({ 'index.html': '', [STAMP_FILE]: 'b'.repeat(64) }), stamp)).toBe(true);
  });
});
