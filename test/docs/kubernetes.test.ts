/**
 * deploy/kubernetes/ against the Kubernetes schemas and against the code. Every manifest is
 * validated offline by kubernetes-models (the API's OpenAPI schemas, compiled) and type-checked
 * against its interfaces (which refuse unknown fields, as kubectl does), and what the
 * manifests say of the gateway is checked with the gateway itself: the probes' paths answer on a
 * gateway assembled in-process, the ports are the settings' defaults, the grace period covers the
 * drain the settings give, every variable named (the Redis topologies' commented ones included)
 * is a setting and loadConfig accepts them together, and the custom metric the autoscaler
 * variant asks for comes from a histogram the gateway exports.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONFIG_VARIABLES,
  DEFAULT_PRODUCTION_METRICS_PORT,
  loadConfig,
} from '../../src/config/config.js';
import { SETTINGS } from '../../src/config/settings.js';
import { PROBE_PATHS } from '../../src/http/paths.js';
import { METRICS } from '../../src/observability/metrics.js';
import { createTestGateway, type TestGateway } from '../fixtures/harness.js';
import { instructions, readDockerfile, runtimeStage } from '../fixtures/dockerfile.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy', 'kubernetes');

/** A manifest as parsed: loosely typed, read by the checks below after schema validation. */
type Manifest = Record<string, any>;

interface Document {
  readonly file: string;
  readonly manifest: Manifest;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry) ? [path] : [];
  });
}

const files = yamlFiles(DEPLOY);
const documents: Document[] = files.flatMap((path) =>
  parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message}`);
    return { file: relative(DEPLOY, path), manifest: doc.toJS() as Manifest };
  }),
);
const isKustomization = (m: Manifest): boolean =>
  String(m.apiVersion).startsWith('kustomize.config.k8s.io/');
const objects = documents.filter((d) => !isKustomization(d.manifest));
const kustomizations = documents.filter((d) => isKustomization(d.manifest));

/** The one object of `kind` in `file`. */
function find(file: string, kind: string): Manifest {
  const found = objects.filter((d) => d.file === file && d.manifest.kind === kind);
  if (found.length !== 1) throw new Error(`${file}: ${found.length} objects of kind ${kind}`);
  return found[0]!.manifest;
}

const deployment = find('deployment.yaml', 'Deployment');
const pod = deployment.spec.template.spec as Manifest;
const container = (pod.containers as Manifest[]).find((c) => c.name === 'gateway')!;
const configMap = find('configmap.yaml', 'ConfigMap');

/** The kubernetes-models class for an apiVersion and kind (`v1` is the core group). */
async function modelFor(apiVersion: string, kind: string) {
  const path = `kubernetes-models/${apiVersion}/${kind}`;
  const module = (await import(path)) as Record<
    string,
    new (data: Manifest) => { validate(): void }
  >;
  const model = module[kind];
  if (!model) throw new Error(`${path} has no ${kind}`);
  return model;
}

describe('the manifests in deploy/kubernetes', () => {
  it('are each a Kubernetes object valid against its schema, or a kustomization', async () => {
    expect(objects.map((d) => d.manifest.kind)).toEqual(
      expect.arrayContaining([
        'Deployment',
        'Service',
        'PodDisruptionBudget',
        'HorizontalPodAutoscaler',
        'ConfigMap',
      ]),
    );
    for (const { file, manifest } of objects) {
      const model = await modelFor(String(manifest.apiVersion), String(manifest.kind));
      // Throws with every field the schema refuses, e.g. a port written as a string.
      expect(() => new model(manifest).validate(), file).not.toThrow();
    }
  });

  it('refuses what the schemas refuse (the validation can fail)', async () => {
    const model = await modelFor('apps/v1', 'Deployment');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = '4000';
    expect(() => new model(broken).validate()).toThrow(/containerPort/);
    delete broken.spec.selector;
    expect(() => new model(broken).validate()).toThrow(/selector/);
  });

  it('hold no field the API does not know (a typo the schemas alone let through)', () => {
    // The OpenAPI schemas allow unknown fields; `kubectl apply` (strict field validation) refuses
    // them. kubernetes-models' types are generated from the same schemas, and TypeScript refuses
    // an object literal's unknown properties: each manifest is type-checked as one.
    const typo = structuredClone(deployment);
    typo.spec.template.spec.containers[0].livenesProbe = {};
    const { diagnostics, checked } = typeCheck([
      ...objects,
      { file: 'deployment.yaml, with a typo', manifest: typo },
    ]);
    expect(checked).toBe(objects.length + 1);
    expect(diagnostics).toEqual([
      expect.stringMatching(/^deployment\.yaml, with a typo: .*'"livenesProbe"' does not exist/),
    ]);
  }, 20_000);

  it('are all in a kustomization, whose resources and patches exist', () => {
    const listed = new Set<string>();
    for (const { file, manifest } of kustomizations) {
      const dir = dirname(join(DEPLOY, file));
      for (const entry of [
        ...((manifest.resources as string[] | undefined) ?? []),
        ...((manifest.patches as { path: string }[] | undefined) ?? []).map((p) => p.path),
      ]) {
        const path = resolve(dir, entry);
        expect(() => statSync(path), `${file}: ${entry}`).not.toThrow();
        listed.add(relative(DEPLOY, path));
      }
    }
    // The adapter's rules belong to the adapter's namespace: merged there by hand (its header).
    const unlisted = objects
      .map((d) => d.file)
      .filter((file) => !listed.has(file) && !file.endsWith('prometheus-adapter-rules.yaml'));
    expect(unlisted).toEqual([]);
  });

  it('send the reader to sections of docs/deploy.md that exist, and name files that exist', () => {
    const headings = new Set(
      [...readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8').matchAll(/^#+ +(.+)$/gm)].map(
        (m) => m[1],
      ),
    );
    const texts = [...files, join(DEPLOY, 'README.md'), join(ROOT, 'Dockerfile')].map((path) =>
      readFileSync(path, 'utf8').replace(/\n\s*#\s*/g, ' '),
    );
    const cited = texts.flatMap((text) =>
      [...text.matchAll(/docs\/deploy\.md "([^"]+)"/g)].map((m) => m[1] ?? ''),
    );
    expect(cited.length).toBeGreaterThan(3);
    expect(cited.filter((heading) => !headings.has(heading))).toEqual([]);
    const readme = readFileSync(join(DEPLOY, 'README.md'), 'utf8');
    const named = [...readme.matchAll(/`([\w./-]+\.yaml|[\w-]+\/)`/g)].map((m) => m[1] ?? '');
    expect(named.length).toBeGreaterThan(5);
    const missing = named.filter(
      (path) =>
        ![DEPLOY, ROOT].some((dir) => {
          try {
            return statSync(join(dir, path)) !== undefined;
          } catch {
            return false;
          }
        }),
    );
    expect(missing).toEqual([]);
  });

  it('name the image the kustomization sets, built by the Dockerfile', () => {
    const base = kustomizations.find((d) => d.file === 'kustomization.yaml')!.manifest;
    const images = (base.images as { name: string }[]).map((i) => i.name);
    expect(images).toContain(container.image);
  });
});

describe('the Deployment agrees with the code', () => {
  let test: TestGateway;
  beforeAll(() => {
    // The probes call no service: an address nothing listens on will do.
    test = createTestGateway('http://127.0.0.1:9');
  });
  afterAll(() => test.close());

  const port = (name: string): number =>
    (container.ports as Manifest[]).find((p) => p.name === name)?.containerPort as number;

  it('probes /health for liveness and start-up, /readiness for readiness, on the http port', async () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readiness', port: 'http' });
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      const path = probe.httpGet.path as string;
      // Never admitted: a busy copy still answers its probes.
      expect(PROBE_PATHS.has(path), path).toBe(true);
      const response = await test.gateway.fetch(`http://gateway.test${path}`);
      expect(response.status, path).toBe(200);
    }
    const readiness = await test.gateway.fetch('http://gateway.test/readiness');
    expect(await readiness.json()).toMatchObject({ ready: true });
  });

  it('opens the ports the settings give: PORT and the production metrics port', () => {
    const env = environment();
    expect(port('http')).toBe(env.PORT ? Number(env.PORT) : SETTINGS.PORT.fallback);
    expect(env.NODE_ENV).toBe('production');
    expect(port('metrics')).toBe(
      env.METRICS_PORT ? Number(env.METRICS_PORT) : DEFAULT_PRODUCTION_METRICS_PORT,
    );
    // Where an annotation-discovering Prometheus scrapes.
    const annotations = deployment.spec.template.metadata.annotations as Record<string, string>;
    expect(annotations['prometheus.io/port']).toBe(String(port('metrics')));
    // The Dockerfile says so too.
    const exposed = instructions(runtimeStage(readDockerfile()), 'EXPOSE').join(' ').split(/\s+/);
    expect(exposed).toEqual(
      expect.arrayContaining([String(port('http')), String(port('metrics'))]),
    );
  });

  it('has a grace period over the drain, and a readiness delay over the probe taking it out', () => {
    const env = environment();
    const delayMs = Number(
      env.SHUTDOWN_READINESS_DELAY_MS ?? SETTINGS.SHUTDOWN_READINESS_DELAY_MS.fallback,
    );
    const timeoutMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? SETTINGS.SHUTDOWN_TIMEOUT_MS.fallback);
    // The stated values are the code's defaults: nothing here tunes the drain away from them.
    expect(delayMs).toBe(SETTINGS.SHUTDOWN_READINESS_DELAY_MS.fallback);
    expect(timeoutMs).toBe(SETTINGS.SHUTDOWN_TIMEOUT_MS.fallback);
    // src/runtime.ts exits by delay + timeout at the latest; a second more to close and flush.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
      delayMs + timeoutMs + 1000,
    );
    const { periodSeconds, failureThreshold } = container.readinessProbe;
    expect(periodSeconds * failureThreshold * 1000).toBeLessThanOrEqual(delayMs);
  });

  it('names only settings of the gateway, the secrets only from the Secret', () => {
    const names = [
      ...(container.env as Manifest[]).map((e) => e.name as string),
      ...Object.keys(configMap.data as object),
      ...commentedSettings().map(([name]) => name),
    ];
    expect(names.filter((name) => !CONFIG_VARIABLES.includes(name as never))).toEqual([]);
    const fromSecret = (container.env as Manifest[])
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => e.name as string);
    expect(fromSecret).toEqual(expect.arrayContaining(['GATEWAY_SECRET', 'REDIS_URL']));
    // Secrets (the verbatim settings) and the URL holding Redis's password never in plain text.
    const secret = (name: string) =>
      name === 'REDIS_URL' || SETTINGS[name as keyof typeof SETTINGS]?.verbatim;
    const plain = names.filter((name) => secret(name) && !fromSecret.includes(name));
    expect(plain).toEqual([]);
  });

  it('starts a copy loadConfig accepts, for each Redis topology the ConfigMap offers', () => {
    const env = environment();
    expect(() => loadConfig(env)).not.toThrow();
    const single = loadConfig(env);
    expect(single.redis?.sentinels).toEqual([]);
    expect(single.port).toBe(port('http'));
    expect(single.metricsPort).toBe(port('metrics'));

    const commented = commentedSettings();
    const sentinel = Object.fromEntries(commented.filter(([n]) => n.startsWith('REDIS_SENTINEL')));
    const cluster = Object.fromEntries(commented.filter(([n]) => n.startsWith('REDIS_CLUSTER')));
    expect(Object.keys(sentinel).sort()).toEqual(['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME']);
    expect(Object.keys(cluster)).toEqual(['REDIS_CLUSTER_NODES']);
    expect(loadConfig({ ...env, ...sentinel }).redis?.sentinels.length).toBeGreaterThan(1);
    expect(loadConfig({ ...env, ...cluster }).redis?.clusterNodes.length).toBeGreaterThan(0);
  });

  it("runs as the Dockerfile's non-root user, read-only, with requests and a memory limit", () => {
    const user = instructions(runtimeStage(readDockerfile()), 'USER').at(-1) ?? '';
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(String(pod.securityContext.runAsUser)).toBe(user.split(':')[0]);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.resources.requests).toMatchObject({ cpu: '1' });
    expect(container.resources.requests.memory).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
  });
});

describe('around the Deployment', () => {
  const labels = deployment.spec.template.metadata.labels as Record<string, string>;
  const selects = (selector: Record<string, string>) =>
    Object.entries(selector).every(([key, value]) => labels[key] === value);

  it('the Service sends to the http port only, never the metrics port', () => {
    const service = find('service.yaml', 'Service');
    expect(selects(service.spec.selector)).toBe(true);
    const targets = (service.spec.ports as Manifest[]).map((p) => p.targetPort);
    expect(targets).toEqual(['http']);
  });

  it('the PodDisruptionBudget and the autoscalers keep at least two copies serving', () => {
    const pdb = find('pdb.yaml', 'PodDisruptionBudget');
    expect(selects(pdb.spec.selector.matchLabels)).toBe(true);
    for (const file of ['hpa.yaml', 'admission-waits/hpa.yaml']) {
      const hpa = find(file, 'HorizontalPodAutoscaler');
      expect(hpa.apiVersion).toBe('autoscaling/v2');
      expect(hpa.spec.scaleTargetRef).toEqual({
        apiVersion: deployment.apiVersion,
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
      expect(hpa.spec.minReplicas - pdb.spec.maxUnavailable).toBeGreaterThanOrEqual(2);
      const cpu = (hpa.spec.metrics as Manifest[]).find((m) => m.resource?.name === 'cpu');
      expect(cpu?.resource.target.type, file).toBe('Utilization');
    }
  });

  it('the custom-metric variant scales on the admission-wait histogram the gateway exports', () => {
    const hpa = find('admission-waits/hpa.yaml', 'HorizontalPodAutoscaler');
    // The overlay's patch replaces the base's autoscaler: same name.
    expect(hpa.metadata.name).toBe(find('hpa.yaml', 'HorizontalPodAutoscaler').metadata.name);
    const pods = (hpa.spec.metrics as Manifest[]).filter((m) => m.type === 'Pods');
    expect(pods).toHaveLength(1);
    const asked = pods[0]!.pods.metric.name as string;

    const adapter = find('admission-waits/prometheus-adapter-rules.yaml', 'ConfigMap');
    const { rules } = parseYaml(adapter.data['config.yaml'] as string) as { rules: Manifest[] };
    const served = rules.map((rule) => {
      const series = /^'?([a-z_:][a-z0-9_:]*)\{/.exec(rule.seriesQuery as string)?.[1] ?? '';
      // The adapter's templates are Go's: ${1} is JavaScript's $1.
      const template = (rule.name.as as string).replace(/\$\{(\d+)\}/g, '$$$1');
      const name = series.replace(new RegExp(rule.name.matches as string), template);
      return { series, name };
    });
    const rule = served.find((s) => s.name === asked);
    expect(rule, `a rule serving ${asked}`).toBeDefined();
    // The series is the _sum of sms_admission_wait_seconds: a histogram of the gateway's.
    const histogram = rule!.series.replace(/_sum$/, '');
    expect(histogram).toBe('sms_admission_wait_seconds');
    expect(METRICS[histogram as keyof typeof METRICS].type).toBe('histogram');
  });
});

/** The container's environment as a copy gets it: the ConfigMap, then `env`, secrets made up. */
function environment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of (container.envFrom as Manifest[]) ?? []) {
    expect(source.configMapRef?.name).toBe(configMap.metadata.name);
    Object.assign(env, configMap.data);
  }
  for (const entry of container.env as Manifest[]) {
    const from = entry.valueFrom as Manifest | undefined;
    if (entry.value !== undefined) env[entry.name] = String(entry.value);
    else if (from?.fieldRef) env[entry.name] = 'sms-gateway-7d9f8-abcde';
    // An optional key may be absent from the Secret: left unset, as Kubernetes leaves it.
    else if (from?.secretKeyRef && !from.secretKeyRef.optional)
      env[entry.name] = madeUpSecret(entry.name as string);
  }
  return env;
}

function madeUpSecret(name: string): string {
  if (name === 'REDIS_URL') return 'redis://:redis-password@redis:6379/0';
  return 'k8s-test-secret-0123456789abcdef0123456789abcdef';
}

/** `# NAME: value` lines of the ConfigMap: the settings it offers to uncomment. */
function commentedSettings(): [string, string][] {
  const text = readFileSync(join(DEPLOY, 'configmap.yaml'), 'utf8');
  return [...text.matchAll(/^\s*#\s*([A-Z][A-Z0-9_]+):\s*(\S+)\s*$/gm)].map((m) => [
    m[1] ?? '',
    m[2] ?? '',
  ]);
}

/**
 * Each document as a TypeScript object literal typed by kubernetes-models' interface for its kind,
 * in one in-memory program: the type errors, each prefixed by its document's file.
 */
function typeCheck(docs: readonly Document[]): { diagnostics: string[]; checked: number } {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es5.d.ts'],
    types: [],
  };
  // Beside this test, so kubernetes-models resolves from the project's node_modules.
  const sources = new Map(
    docs.map(({ manifest }, i) => {
      const { apiVersion, kind } = manifest as { apiVersion: string; kind: string };
      const text = [
        `import type { I${kind} } from 'kubernetes-models/${apiVersion}/${kind}';`,
        `export const manifest: I${kind} = ${JSON.stringify(manifest, null, 1)};`,
      ].join('\n');
      return [join(ROOT, 'test', 'docs', `__manifest-${i}.ts`), text] as const;
    }),
  );
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists } = host;
  host.getSourceFile = (name, language, ...rest) => {
    const text = sources.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, text, language);
  };
  host.fileExists = (name) => sources.has(name) || fileExists.call(host, name);
  const program = ts.createProgram([...sources.keys()], options, host);
  const names = [...sources.keys()];
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const index = names.indexOf(diagnostic.file?.fileName ?? '');
    const where = docs[index]?.file ?? diagnostic.file?.fileName ?? '?';
    return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`;
  });
  return { diagnostics, checked: names.filter((name) => program.getSourceFile(name)).length };
}
