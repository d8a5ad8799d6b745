/**
 * The bench's child processes: the simulator, the bare proxy and the gateway each run in their
 * own Node process, so none shares an event loop with autocannon or with each other. Every child
 * is killed when the bench exits, fails or is interrupted, and exits by itself if the bench dies
 * (see child-hooks.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../support/dist.js';
import { spawnGateway, stopChild, watchGateway } from '../support/gateway-process.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// Plain JavaScript, so the gateway (compiled, no TypeScript loader) can preload it too.
const HOOKS = join(ROOT, 'bench', 'child-hooks.mjs');
const STARTUP_TIMEOUT_MS = 30_000;

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** Base URL the child listens on (no trailing slash). */
  readonly url: string;
  /** From spawn to the first healthy answer, in ms (the gateway only; 0 for the others). */
  readonly startToHealthyMs: number;
  /** Asks the child over IPC and waits for its answer. */
  ask<T>(message: { type: string }): Promise<T>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the bench's child processes`);
      for (const child of running) child.kill('SIGKILL');
      process.exit(130);
    });
  }
}

/**
 * Starts a bench entry (bench/*.ts) under tsx with an IPC channel; it reports
 * `{ type: 'ready', url }` once listening.
 */
export function startEntry(
  name: string,
  entry: string,
  env: Record<string, string>,
  execArgv: readonly string[] = [],
): Promise<Child> {
  installExitHooks();
  const child = fork(join(ROOT, entry), [], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv: [...execArgv, '--import', 'tsx', '--import', HOOKS],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return waitUntilReady(name, child, (resolve) => {
    child.on('message', (message: { type?: string; url?: string }) => {
      if (message.type === 'ready' && typeof message.url === 'string') resolve(message.url);
    });
  });
}

/**
 * Starts the gateway exactly as users run it (`node dist/main.js`, built first if stale), on an
 * ephemeral loopback port, with the starter the e2e tests use (support/gateway-process.ts), and
 * times spawn to a healthy /health. The IPC channel only carries child-hooks.mjs's GC and
 * parent-gone handling. Another checkout (`root`) must have run `npm ci` (which builds it).
 * `launcher` runs node under a command that execs it (e.g. prlimit: fewer file descriptors).
 */
export async function startGateway(
  env: Record<string, string>,
  execArgv: readonly string[] = [],
  root = ROOT,
  launcher: readonly string[] = [],
): Promise<Child> {
  installExitHooks();
  if (root === ROOT) ensureBuilt();
  const spawnedAt = performance.now();
  const child = spawnGateway({
    // No load balancer to tell of a drain: exit on SIGTERM without the readiness delay.
    env: { SHUTDOWN_READINESS_DELAY_MS: '0', ...env },
    execArgv: [...execArgv, '--import', HOOKS],
    root,
    ipc: true,
    launcher,
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  const gateway = await watchGateway(child, {
    echoStderr: true,
    bannerTimeoutMs: STARTUP_TIMEOUT_MS,
  });
  // The banner follows listen(); /health confirms the server answers.
  const health = await fetch(`${gateway.url}/health`);
  if (!health.ok) {
    await gateway.close();
    throw new Error(`gateway /health answered ${health.status}`);
  }
  return {
    ...handle('gateway', child, gateway.url, exited),
    startToHealthyMs: performance.now() - spawnedAt,
  };
}

function waitUntilReady(
  name: string,
  child: ChildProcess,
  listen: (resolve: (url: string) => void) => void,
): Promise<Child> {
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${STARTUP_TIMEOUT_MS} ms`));
    }, STARTUP_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited during start-up (${signal ?? `code ${code}`})`));
    });
    listen((url) => {
      clearTimeout(timer);
      resolve(handle(name, child, url.replace(/\/+$/, ''), exited));
    });
  });
}

function handle(name: string, child: ChildProcess, url: string, exited: Promise<void>): Child {
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} has no pid`);
  return {
    name,
    pid,
    url,
    startToHealthyMs: 0,
    ask<T>(message: { type: string }): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const onMessage = (reply: { type?: string }): void => {
          if (reply.type !== message.type) return;
          child.off('message', onMessage);
          resolve(reply as T);
        };
        child.on('message', onMessage);
        child.send(message, (error) => {
          if (error) {
            child.off('message', onMessage);
            reject(error);
          }
        });
      });
    },
    async stop() {
      await stopChild(child);
      await exited;
    },
  };
}

/** Resident set size of a process, in bytes, from /proc/<pid>/status (Linux only). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}
