/**
 * A real redis-server on 127.0.0.1, on a free port, with persistence off: started by a test file
 * or a bench and stopped by its PID. Debian's redis-server package provides the binary (`.ci/run`
 * installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  close(): Promise<void>;
}

const MISSING =
  'redis-server was not found on PATH. The Redis tests and benches need a real one: install Debian\'s package with "apt-get install -y redis-server" (.ci/run does this).';

export interface RedisOptions {
  /** A given port is tried once; by default a free one is found (retried if taken meanwhile). */
  readonly port?: number;
  /** Makes the server require this password (`requirepass`). */
  readonly password?: string;
}

export async function startRedis(options: RedisOptions = {}): Promise<RunningRedis> {
  let lastOutput = '';
  for (let attempt = 0; attempt < (options.port ? 1 : 5); attempt += 1) {
    const port = options.port ?? (await freePort());
    const dir = await mkdtemp(join(tmpdir(), 'gateway-redis-'));
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        ...(options.password ? ['--requirepass', options.password] : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const started = await waitUntilReady(child);
    if (started.ok && child.pid !== undefined) {
      const pid = child.pid;
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pid,
        close: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = once(child, 'exit');
            process.kill(pid, 'SIGTERM');
            await exited;
          }
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await rm(dir, { recursive: true, force: true });
    if (started.missing) throw new Error(MISSING);
    lastOutput = started.output;
  }
  throw new Error(`redis-server did not start:\n${lastOutput}`);
}

function waitUntilReady(
  child: ChildProcess,
): Promise<{ ok: boolean; missing: boolean; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const timer = setTimeout(() => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
      resolve({ ok: false, missing: false, output: `${output}\n(timed out)` });
    }, 10_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        // Keep draining the pipes so a chatty server never blocks on a full one.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ ok: true, missing: false, output });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ ok: false, missing: error.code === 'ENOENT', output: error.message });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ ok: false, missing: false, output: `${output}\n(exited with ${code})` });
    });
  });
}

/** A port nothing listens on (at the moment of asking). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
