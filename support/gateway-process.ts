/**
 * The built gateway in a child process, as `npm start` runs it (`node dist/main.js`), on
 * 127.0.0.1 and an ephemeral port: started by the e2e tests and by the benches. Ready once the
 * start-up banner is printed; its URL is read from the banner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { ROOT } from './dist.js';

const EXIT_GRACE_MS = 5_000;

export interface GatewayProcessOptions {
  /** Added to this process's environment (after HOST=127.0.0.1 and PORT=0). */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags before the entry point (e.g. `--import` a preload). */
  readonly execArgv?: readonly string[];
  /** Another checkout whose dist/ to run (it must have run `npm ci`). @default this one */
  readonly root?: string;
  /** Opens an IPC channel (fd 3) for the child. @default false */
  readonly ipc?: boolean;
  /**
   * A command that runs node in its place (it must exec it, keeping the pid), e.g.
   * `['prlimit', '--nofile=1024:1024', '--']` for a copy with fewer file descriptors. @default none
   */
  readonly launcher?: readonly string[];
  /** After the banner, copy the child's stderr to ours (what goes wrong). @default false */
  readonly echoStderr?: boolean;
  /** @default 15000 */
  readonly bannerTimeoutMs?: number;
  /** Keep everything printed on stdout (the JSON log) for logs(): tests; not long benches. @default false */
  readonly keepLogs?: boolean;
}

export interface GatewayProcess {
  /** e.g. http://127.0.0.1:39147/graphql */
  readonly endpoint: string;
  /** The origin, e.g. http://127.0.0.1:39147 */
  readonly url: string;
  /** Everything the process printed on stderr up to and including the banner. */
  readonly banner: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** All the process has printed on stderr so far (the human lines; empty when echoed). */
  stderr(): string;
  /** The JSON log lines printed on stdout so far (with keepLogs; else none after the banner). */
  logs(): string;
  /** SIGTERM (clean drain), then SIGKILL by PID if it has not exited in time. */
  close(): Promise<void>;
}

/** Spawns dist/main.js without waiting: for callers that track or watch the child themselves. */
export function spawnGateway(options: GatewayProcessOptions = {}): ChildProcess {
  const root = options.root ?? ROOT;
  const [command = process.execPath, ...prefix] = options.launcher ?? [];
  const node = options.launcher?.length ? [process.execPath] : [];
  const args = [...prefix, ...node, ...(options.execArgv ?? []), join(root, 'dist', 'main.js')];
  return spawn(command, args, {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
}

/** Starts the gateway and resolves once its banner is printed; kills it if it never is. */
export async function startGatewayProcess(
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  return watchGateway(spawnGateway(options), options);
}

/** Waits for an already spawned gateway's banner (spawnGateway), with the same handle. */
export async function watchGateway(
  child: ChildProcess,
  options: Pick<GatewayProcessOptions, 'echoStderr' | 'bannerTimeoutMs' | 'keepLogs'> = {},
): Promise<GatewayProcess> {
  const timeoutMs = options.bannerTimeoutMs ?? 15_000;
  let stdout = '';
  let stderr = '';
  let ready = false;
  // Both pipes are drained for the whole run, so a chatty child never blocks on a full one;
  // stdout (the JSON log) is kept only until the banner, for the error message.
  child.stdout?.on('data', (chunk: Buffer) => {
    if (!ready || options.keepLogs) stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (ready && options.echoStderr) process.stderr.write(chunk);
    else stderr += chunk.toString();
  });
  const close = () => stopChild(child);
  try {
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no start-up banner after ${timeoutMs} ms:\n${stderr}`)),
        timeoutMs,
      );
      const onData = (): void => {
        // The banner (for people, on stderr) ends with the curl line (simulator) or the
        // upstream's origin (real service).
        if (!/^ {2}curl .*$|^Upstream: http.*$/m.test(stderr)) return;
        clearTimeout(timer);
        child.off('exit', onExit);
        child.stderr?.off('data', onData);
        resolve(stderr);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        clearTimeout(timer);
        reject(
          new Error(`the gateway exited (${signal ?? `code ${code}`}):\n${stderr}\n${stdout}`),
        );
      };
      child.stderr?.on('data', onData);
      child.once('exit', onExit);
    });
    ready = true;
    if (!options.keepLogs) stdout = '';
    const endpoint = /on (http:\/\/\S+\/graphql)/.exec(banner)?.[1];
    if (endpoint === undefined || child.pid === undefined) {
      throw new Error(`no endpoint in the banner:\n${banner}`);
    }
    return {
      endpoint,
      url: new URL(endpoint).origin,
      banner,
      child,
      pid: child.pid,
      stderr: () => stderr,
      logs: () => stdout,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** SIGTERM, then SIGKILL if the child has not exited within the grace period. */
export async function stopChild(child: ChildProcess, graceMs = EXIT_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(force);
}
