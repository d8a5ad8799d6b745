/**
 * A real redis-server on 127.0.0.1, on a free port, with persistence off: started by a test file
 * or a bench and stopped by its PID. Debian's redis-server package provides the binary (`.ci/run`
 * installs it). Also a three-node Redis Cluster built from it.
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
  /** More redis-server arguments (cluster mode, ...). */
  readonly args?: readonly string[];
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
        ...(options.args ?? []),
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

export interface RunningRedisCluster {
  /** The nodes, each a primary holding a third of the slots. */
  readonly nodes: readonly RunningRedis[];
  /** REDIS_URL (the first node) and REDIS_CLUSTER_NODES (the others), as the gateway reads them. */
  readonly env: { readonly REDIS_URL: string; readonly REDIS_CLUSTER_NODES: string };
  close(): Promise<void>;
}

/**
 * A three-node Redis Cluster on 127.0.0.1 (three primaries, no replicas), built the way an
 * operator builds one: redis-server in cluster mode, joined by `redis-cli --cluster create`
 * (Debian's redis-tools, installed with redis-server).
 */
export async function startRedisCluster(): Promise<RunningRedisCluster> {
  const nodes: RunningRedis[] = [];
  try {
    for (let i = 0; i < 3; i += 1) {
      // Each node also listens on port + 10000 (the cluster bus): that one must be free too.
      const port = await freeClusterPort();
      nodes.push(
        await startRedis({
          port,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
        }),
      );
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-yes']);
    for (const node of nodes) await clusterOk(node.port);
  } catch (error) {
    await Promise.allSettled(nodes.map((node) => node.close()));
    throw error;
  }
  return {
    nodes,
    env: {
      REDIS_URL: nodes[0]?.url ?? '',
      REDIS_CLUSTER_NODES: nodes
        .slice(1)
        .map((node) => `127.0.0.1:${node.port}`)
        .join(','),
    },
    close: async () => {
      await Promise.allSettled(nodes.map((node) => node.close()));
    },
  };
}

async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535) continue;
    if (await isFree(port + 10_000)) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Every node agrees the cluster is whole (all slots served) before a test uses it. */
async function clusterOk(port: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  let info = '';
  while (Date.now() < deadline) {
    info = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
    if (/cluster_state:ok/.test(info)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Redis Cluster node ${port} not ok:\n${info}`);
}

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} exited ${code}:\n${output}`)),
    );
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
