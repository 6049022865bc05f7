/**
 * `node scripts/check-links.ts`: every relative link in the repository's Markdown must reach a file
 * or folder of the repository, and every `#anchor` a heading of the page it names (GitHub's slugs).
 * Part of `pnpm lint`, so a page moved or a heading renamed cannot leave a dead link behind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const pages = execFileSync('git', ['ls-files', '*.md', '**/*.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((path) => path !== '' && !path.endsWith('CHANGELOG.md') && existsSync(join(root, path)));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> => {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map(([, heading]) => slug(heading as string)));
};

const problems: string[] = [];
for (const page of pages) {
  const file = join(root, page);
  // Links in code blocks and inline code are examples, not links.
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = '', anchor] = target.split('#');
    const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (relative(root, destination).startsWith('..') || !existsSync(destination)) {
      problems.push(`${page}: ${target} does not exist in the repository`);
    } else if (anchor !== undefined && destination.endsWith('.md') && !anchorsOf(destination).has(anchor)) {
      problems.push(`${page}: ${target} names no heading of ${relative(root, destination)}`);
    }
  }
}

if (problems.length > 0) {
  console.error(`${problems.length} dead link(s) in the documentation:\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`Links: ${pages.length} Markdown pages, every relative link resolves.`);
