/**
 * What the docs test checks in Markdown: the shell blocks that a reader would copy (each run, its
 * exit code checked) and the relative links (each file and anchor must exist). Kept apart from the
 * test so that its own test can feed it broken pages.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One fenced `sh`/`bash` block, and what the comment right above it says about running it. */
export interface ShellBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly code: string;
  /** `<!-- docs-test: skip — why -->`: not run here (AWS, real keys, a GPU, the suite itself). */
  readonly skip?: string;
  /** `<!-- docs-test: exit N -->`: the exit code the block is meant to end with. */
  readonly exit: number;
}

/** `<!-- docs-test: file NAME -->` above a fenced block: the block is a file the shell blocks use, written as NAME first. */
export function fileBlocks(text: string): { readonly name: string; readonly content: string }[] {
  const out: { name: string; content: string }[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const m = /^<!--\s*docs-test:\s*file\s+(\S+)\s*-->\s*$/.exec(line);
    if (!m || !lines[i + 1]?.startsWith('```')) return;
    let end = i + 2;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    out.push({ name: m[1]!, content: `${lines.slice(i + 2, end).join('\n')}\n` });
  });
  return out;
}

/** README.md and every page under docs/. */
export function docFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []));
  return [join(root, 'README.md'), ...walk(join(root, 'docs')).sort()];
}

export function shellBlocks(file: string, text: string): ShellBlock[] {
  const lines = text.split('\n');
  const out: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (open[1] === 'sh' || open[1] === 'bash') {
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const directive = above >= 0 ? /^<!--\s*docs-test:\s*(skip|exit)\b\s*(.*?)\s*-->\s*$/.exec(lines[above]!) : null;
      out.push({
        file,
        line: i + 1,
        code: lines.slice(i + 1, end).join('\n'),
        exit: directive?.[1] === 'exit' ? Number(directive[2]) : 0,
        ...(directive?.[1] === 'skip' ? { skip: directive[2]!.replace(/^[—-]\s*/, '') || 'no reason given' } : {}),
      });
    }
    i = end;
  }
  return out;
}

/** GitHub's anchor of a heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const h = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (h) anchors.add(slug(h[1]!));
  }
  return anchors;
}

/** Relative links whose file or anchor does not exist, as `file:line: target`. */
export function deadLinks(files: readonly string[], root: string): string[] {
  const dead: string[] = [];
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    let fenced = false;
    lines.forEach((line, n) => {
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced) return;
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const full = path === '' ? file : resolve(dirname(file), path);
        const where = `${relative(root, file)}:${n + 1}: ${target}`;
        if (!existsSync(full)) dead.push(where);
        else if (anchor !== undefined && full.endsWith('.md') && !anchorsOf(readFileSync(full, 'utf8')).has(anchor)) dead.push(where);
      }
    });
  }
  return dead;
}

/**
 * The environment a block runs in: this one without provider keys or AWS credentials, so that an
 * example can never reach a real endpoint, and npm kept offline.
 */
export function blockEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { NO_COLOR: '1', npm_config_offline: 'true' };
  for (const [name, value] of Object.entries(env)) if (!/_API_KEY$|^AWS_|_TOKEN$/.test(name)) out[name] ??= value;
  return out;
}

/**
 * Runs a block with bash, stopping at the first failing command (`-e`, `pipefail`), in `cwd`;
 * `npx sondage` is this checkout's CLI (bin/sondage.mjs started as npx starts it, through its first
 * lines and the Node flags they give, without npx's own start-up). Resolves
 * with the exit code and the output; asynchronous, so the test worker stays responsive while a
 * demo runs.
 */
export function runBlock(block: ShellBlock, cwd: string, cli: string, timeoutMs = 240_000): Promise<{ code: number; output: string }> {
  const prelude = `set -eo pipefail\nnpx() { if [ "$1" = sondage ]; then shift; ${JSON.stringify(cli)} "$@"; else command npx "$@"; fi; }\n`;
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', prelude + block.code], { cwd, env: blockEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output: signal ? `${output}\n(killed by ${signal} after ${timeoutMs} ms)` : output });
    });
  });
}
