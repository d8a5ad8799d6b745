/**
 * The real entry point in a child process, as `npm start` runs it (the compiled dist/main.js,
 * built by test/setup/build-dist.ts): built-in simulator unless UPSTREAM_URL is given,
 * 127.0.0.1, an ephemeral port. Resolves once the start-up banner is printed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { DIST_MAIN, ROOT } from '../../scripts/dist.js';

const BANNER_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 5_000;

export interface GatewayProcess {
  /** e.g. http://127.0.0.1:39147/graphql */
  readonly endpoint: string;
  /** Everything the process printed on stderr up to and including the banner. */
  readonly banner: string;
  readonly child: ChildProcessWithoutNullStreams;
  /** SIGTERM (clean drain), then SIGKILL by PID if it has not exited in time. */
  close(): Promise<void>;
}

export async function startGatewayProcess(
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [DIST_MAIN], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_URL: '',
      LOG_LEVEL: 'silent',
      ...env,
    },
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  try {
    const banner = await new Promise<string>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new Error(`no start-up banner after ${BANNER_TIMEOUT_MS} ms:\n${output}`)),
        BANNER_TIMEOUT_MS,
      );
      // The banner is for people, on stderr; stdout is the JSON log.
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        // The banner ends with the curl line (simulator) or the upstream's origin (real service).
        if (/^ {2}curl .*$|^Upstream: http.*$/m.test(output)) {
          clearTimeout(timer);
          resolve(output);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the gateway exited with ${code}:\n${output}\n${stdout}`));
      });
    });
    const endpoint = /on (http:\/\/\S+\/graphql)/.exec(banner)?.[1];
    if (endpoint === undefined) throw new Error(`no endpoint in the banner:\n${banner}`);
    return { endpoint, banner, child, close };
  } catch (error) {
    await close();
    throw error;
  }
}
