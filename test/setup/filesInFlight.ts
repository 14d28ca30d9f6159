/**
 * Names the test files still running when vitest exits before its run ended. When a fork dies
 * mid-file (a native crash, the kernel's OOM killer, a stray signal), vitest's own process meets the
 * closed channel as an unhandled rejection and exits at once, with no summary and nothing saying
 * which file that fork was running; CI keeps only the tail of the output. This reporter prints the
 * files a fork had started and not finished, from an `exit` listener put before vitest's own: that
 * one calls `process.exit()` again, which ends the process without running the listeners after it.
 * A run that ends normally prints nothing.
 */
import { writeSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export default class FilesInFlight implements Reporter {
  /** File (project: path) → when a fork started collecting it. */
  private readonly running = new Map<string, number>();
  private ended = false;

  constructor() {
    process.prependOnceListener('exit', () => this.report());
  }

  onTestModuleQueued(m: TestModule): void {
    this.running.set(this.name(m), Date.now());
  }

  onTestModuleEnd(m: TestModule): void {
    this.running.delete(this.name(m));
  }

  onTestRunEnd(): void {
    this.ended = true;
  }

  private name(m: TestModule): string {
    return `${m.project.name || 'root'}: ${path.relative(process.cwd(), m.moduleId)}`;
  }

  private report(): void {
    if (this.ended || this.running.size === 0) return;
    const now = Date.now();
    const lines = [...this.running].map(([file, since]) => `  ${file} (for ${((now - since) / 1000).toFixed(1)} s)`);
    // Synchronous: an `exit` listener gets no further turn of the event loop.
    writeSync(2, `\nvitest exited before its run ended; test files a fork was still running:\n${lines.join('\n')}\n`);
  }
}
