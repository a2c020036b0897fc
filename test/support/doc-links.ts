/**
 * Relative links and `#anchors` in Markdown, checked the way GitHub renders them: markdown-it finds the
 * links and headings (not the ones inside code), github-slugger makes each heading's anchor.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt, { type Token } from 'markdown-it';

export interface BrokenLink {
  /** The file holding the link, relative to the root. */
  file: string;
  /** 1-based line of the block the link is in. */
  line: number;
  target: string;
  why: string;
}

const markdown = new MarkdownIt();

/** Every Markdown file under `dir` (relative to `root`), recursively. */
export function markdownFilesUnder(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? markdownFilesUnder(root, join(dir, d.name)) : d.name.endsWith('.md') ? [join(dir, d.name)] : [],
  );
}

/** The anchors GitHub gives a Markdown text's headings, duplicates numbered as GitHub numbers them. */
export function headingAnchors(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = markdown.parse(text, {});
  const anchors = new Set<string>();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const words = (tokens[i + 1]?.children ?? [])
      .filter((c) => c.type === 'text' || c.type === 'code_inline')
      .map((c) => c.content)
      .join('');
    anchors.add(slugger.slug(words));
  });
  return anchors;
}

/** Each link (href, block line) of a Markdown text, images included. */
function linksOf(text: string): { href: string; line: number }[] {
  const links: { href: string; line: number }[] = [];
  for (const block of markdown.parse(text, {})) {
    for (const t of block.children ?? ([] as Token[])) {
      const href = t.type === 'link_open' ? t.attrGet('href') : t.type === 'image' ? t.attrGet('src') : null;
      if (href !== null) links.push({ href: String(href), line: (block.map?.[0] ?? 0) + 1 });
    }
  }
  return links;
}

/** The relative links and anchors of `files` (relative to `root`) that lead nowhere. */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let known = anchorsOf.get(path);
    if (known === undefined) anchorsOf.set(path, (known = headingAnchors(readFileSync(path, 'utf8'))));
    return known;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const from = resolve(root, file);
    for (const { href, line } of linksOf(readFileSync(from, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto: — not in the repository
      const [pathPart = '', anchor] = href.split('#', 2).map((p) => decodeURIComponent(p));
      const target = pathPart === '' ? from : resolve(dirname(from), pathPart);
      const report = (why: string) => broken.push({ file, line, target: href, why });
      if (!existsSync(target)) {
        report(`no such file: ${relative(root, target)}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(target).isDirectory() || !target.endsWith('.md'))
        report('an anchor into a file that is not Markdown');
      else if (!anchors(target).has(anchor)) report(`no heading makes #${anchor} in ${relative(root, target)}`);
    }
  }
  return broken;
}
