// The Kubernetes manifests (deploy/kubernetes/mdqs.yaml) checked offline: every object against
// the Kubernetes schemas (the npm package kubernetes-models), and against the service itself: the
// ConfigMap's config loads with the project's config loader, probes hit /readyz and /healthz on a
// declared port, the metrics port is the one metrics.port opens and the one annotated, the keys
// file comes from a Secret, and the Service, PodDisruptionBudget and HorizontalPodAutoscaler point
// at the Deployment's pods.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { loadConfig } from '../../config/load.ts';
import { ROOT } from '../e2e/server-process.ts';

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

const MODELS: Record<string, new (data: any) => { validate(): void }> = { // eslint-disable-line @typescript-eslint/no-explicit-any
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

const docs = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes/mdqs.yaml'), 'utf8'));
const objects = docs.map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as Obj;
});
const byKind = (kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0];
};

describe('deploy/kubernetes/mdqs.yaml', () => {
  it('every object is valid against its Kubernetes schema', () => {
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service']);
    for (const object of objects) {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(Model, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it('the schema check has teeth: a port given as text is refused', () => {
    const broken = structuredClone(byKind('Deployment'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = '8080';
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
  });

  it('the ConfigMap\'s config loads with the service\'s own loader, with the Deployment\'s environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdqs-k8s-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, byKind('ConfigMap').data['config.yaml']);
    const container = byKind('Deployment').spec.template.spec.containers[0];
    const env: Record<string, string> = {};
    for (const variable of container.env) env[variable.name] = variable.value ?? `from-secret-${variable.valueFrom.secretKeyRef.key}`;
    env.CONFIG_FILE = file;
    env.KEYS_FILE = join(ROOT, 'config/keys.yaml');
    const { config } = loadConfig(env);
    expect(config.redis.cluster).toHaveLength(3);
    expect(config.history?.backend).toBe('postgres');
    expect(config.history?.databaseUrl).toBe('from-secret-database-url');
    expect(config.redis.password).toBe('from-secret-redis-password');
    // The metrics listener and the annotation agree; the port is declared on the container.
    const annotations = byKind('Deployment').spec.template.metadata.annotations;
    expect(config.metrics?.port).toBe(9464);
    expect(annotations['prometheus.io/port']).toBe(String(config.metrics?.port));
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(container.ports).toContainEqual(expect.objectContaining({ name: 'metrics', containerPort: config.metrics?.port }));
    expect(config.metrics?.token).toBe('from-secret-metrics-token');
    expect(container.ports).toContainEqual(expect.objectContaining({ name: 'http', containerPort: config.server.port }));
    // The HPA's ceiling is what redis.instances divides by while Redis is down.
    expect(config.redis.instances).toBe(byKind('HorizontalPodAutoscaler').spec.maxReplicas);
    // Behind an ingress that appends to X-Forwarded-For: the hop it adds, never `true` (issue 42).
    expect(config.server.trustProxy).toBe(1);
  });

  it('probes: readiness on /readyz, liveness on /healthz, on the http port', () => {
    const container = byKind('Deployment').spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    const { terminationGracePeriodSeconds } = byKind('Deployment').spec.template.spec;
    // Longer than the drain (server.shutdownGraceMs, 10 s by default).
    const defaults = parseYaml(readFileSync(join(ROOT, 'config/default.yaml'), 'utf8')) as { server: { shutdownGraceMs: number } };
    expect(terminationGracePeriodSeconds * 1000).toBeGreaterThan(defaults.server.shutdownGraceMs);
  });

  it('the keys file comes from a Secret, secrets never from the ConfigMap', () => {
    const pod = byKind('Deployment').spec.template.spec;
    const container = pod.containers[0];
    const keysPath = container.env.find((e: { name: string }) => e.name === 'KEYS_FILE').value as string;
    const mount = container.volumeMounts.find((m: { mountPath: string }) => keysPath.startsWith(`${m.mountPath}/`));
    expect(pod.volumes.find((v: { name: string }) => v.name === mount.name).secret.secretName).toBe('mdqs-keys');
    for (const name of ['DATABASE_URL', 'MDQS__metrics__token', 'MDQS__redis__password', 'MDQS__adapters__tickflow__apiKey']) {
      expect(container.env.find((e: { name: string }) => e.name === name).valueFrom.secretKeyRef.name).toBe('mdqs-secrets');
    }
    expect(byKind('ConfigMap').data['config.yaml']).not.toMatch(/password|token:|apiKey/i);
  });

  it('the Service, PodDisruptionBudget and HorizontalPodAutoscaler point at the Deployment\'s pods', () => {
    const deployment = byKind('Deployment');
    const labels = deployment.spec.template.metadata.labels;
    const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    expect(matches(deployment.spec.selector.matchLabels)).toBe(true);
    expect(matches(byKind('Service').spec.selector)).toBe(true);
    expect(byKind('Service').spec.ports[0].targetPort).toBe('http');
    expect(matches(byKind('PodDisruptionBudget').spec.selector.matchLabels)).toBe(true);
    expect(byKind('HorizontalPodAutoscaler').spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(byKind('HorizontalPodAutoscaler').spec.minReplicas).toBeGreaterThanOrEqual(deployment.spec.replicas);
  });
});
