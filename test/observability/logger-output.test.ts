/**
 * Standard output is written in batches (about 15 request lines a write) and never holds a line
 * longer than LOG_FLUSH_MS; yoga's per-request debug chatter costs nothing unless debug is on.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger, LOG_FLUSH_MS, yogaLogger } from '../../src/observability/logger.js';

const CHILD = fileURLToPath(new URL('../fixtures/log-lines.ts', import.meta.url));

describe('log output', () => {
  it('writes a few lines out while the process runs, without waiting to fill a batch or to exit', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, '3'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const started = performance.now();
      const lines = await new Promise<string[]>((resolve, reject) => {
        let text = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          text += chunk;
          const complete = text.split('\n').filter(Boolean);
          if (complete.length >= 3) resolve(complete);
        });
        child.once('exit', () => reject(new Error(`exited first; it had written: ${text}`)));
      });
      // Three short lines are far under a batch: only the periodic flush writes them.
      expect(child.exitCode).toBeNull();
      expect(lines.map((l) => (JSON.parse(l) as { line: number }).line)).toEqual([0, 1, 2]);
      // The child's start (tsx compiling the logger) dominates; the flush adds at most LOG_FLUSH_MS.
      expect(performance.now() - started).toBeLessThan(4_000 + LOG_FLUSH_MS);
    } finally {
      child.kill();
    }
  });

  it('writes the lines still waiting when the process crashes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, '2', 'crash'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let text = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (text += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).not.toBe(0);
    expect(text.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it("does not even format yoga's debug lines unless debug is on", () => {
    let formatted = 0;
    const chatter = { toString: () => `${++formatted}` };
    const written: string[] = [];
    const destination = { write: (line: string) => void written.push(line) };
    yogaLogger(createLogger('info', destination)).debug('Processing GraphQL Parameters', chatter);
    expect(formatted).toBe(0);
    yogaLogger(createLogger('debug', destination)).debug('Processing GraphQL Parameters', chatter);
    expect(formatted).toBe(1);
    expect(written.join('')).toContain('Processing GraphQL Parameters 1');
  });
});
