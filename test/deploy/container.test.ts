// The container image (Dockerfile, .dockerignore) checked offline against the service itself:
// multi-stage from one BASE (the one deploy/container/build-and-run.sh makes without a registry),
// Node 24 copied from the build stage's `node` devDependency, production dependencies only and
// from an `npm ci --omit=dev`, an unprivileged user that the Kubernetes manifest runs as, npm
// start's command and environment, a build context that holds every file the server loads (its
// import graph walked from src/server.ts) and no package the server loads missing from
// `dependencies`. .ci/run builds and starts the image with the script itself (it checks /healthz
// from inside the container): that takes minutes, so it runs once per CI, not per test run.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/server-process.ts';

type Instruction = { op: string; args: string; line: number };
type Stage = { from: string; name?: string; body: Instruction[] };

/** Dockerfile instructions (continuation lines joined, comments dropped), grouped into stages. */
function parseDockerfile(text: string): { globalArgs: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') start = index + 1;
    if (line.startsWith('#')) return;
    pending += `${line.replace(/\\$/, '')} `;
    if (line.endsWith('\\')) return;
    const match = /^(\S+)\s+(.*)$/.exec(pending.trim());
    if (match) instructions.push({ op: match[1].toUpperCase(), args: match[2].replace(/\s+/g, ' ').trim(), line: start });
    pending = '';
  });
  const globalArgs: Instruction[] = [];
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.op === 'FROM') {
      const [from, as, name] = instruction.args.split(' ');
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, body: [] });
    } else if (stages.length === 0) {
      globalArgs.push(instruction);
    } else {
      stages[stages.length - 1].body.push(instruction);
    }
  }
  return { globalArgs, stages };
}

/** .dockerignore with the form this repository uses: `*`, then `!path` exceptions. */
function contextAllows(ignore: string, file: string): boolean {
  const rules = ignore.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  expect(rules[0], '.dockerignore starts by leaving everything out').toBe('*');
  return rules.slice(1).some((rule) => {
    expect(rule.startsWith('!'), rule).toBe(true);
    const path = rule.slice(1).replace(/\/$/, '');
    return file === path || file.startsWith(`${path}/`);
  });
}

const BUILTINS = new Set(builtinModules);
const packageName = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * Every file the server loads, from src/server.ts: relative imports (static and dynamic, type-only
 * ones left out: they are erased), files named by `new URL('…', import.meta.url)` (workers, data),
 * and the packages imported, by name.
 */
function serverGraph(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = ['src/server.ts'];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    if (!/\.(ts|js|mjs)$/.test(file)) continue;
    const text = readFileSync(join(ROOT, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const specifiers = [
      ...[...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm)].map((m) => m[1]),
      ...[...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]),
    ];
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) queue.push(relative(ROOT, resolve(ROOT, dirname(file), specifier)));
      else if (!specifier.startsWith('node:') && !BUILTINS.has(specifier)) packages.add(packageName(specifier));
    }
    for (const [, target] of text.matchAll(/new URL\(\s*'([^']+)',\s*import\.meta\.url\s*\)/g)) {
      const path = relative(ROOT, resolve(ROOT, dirname(file), target)).replace(/\/$/, '');
      if (existsSync(join(ROOT, path)) && !path.includes('node_modules')) queue.push(path);
    }
  }
  return { files, packages };
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8');
const script = readFileSync(join(ROOT, 'deploy/container/build-and-run.sh'), 'utf8');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
};
const deployment = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes/mdqs.yaml'), 'utf8'))
  .map((d) => d.toJS()).find((o) => o.kind === 'Deployment');
const [build, runtime] = dockerfile.stages;
const ops = (stage: Stage, op: string) => stage.body.filter((i) => i.op === op);
const env = Object.fromEntries(ops(runtime, 'ENV').flatMap((i) =>
  [...i.args.matchAll(/(\w+)=("[^"]*"|\S*)/g)].map((m) => [m[1], m[2].replace(/^"|"$/g, '')])));

describe('Dockerfile', () => {
  it('two stages from one BASE, whose default is the base build-and-run.sh makes without a registry', () => {
    expect(dockerfile.stages.map((s) => [s.from, s.name])).toEqual([['${BASE}', 'build'], ['${BASE}', 'runtime']]);
    const base = dockerfile.globalArgs.find((i) => i.op === 'ARG' && i.args.startsWith('BASE='))?.args.slice('BASE='.length);
    expect(base).toBe('localhost/mdqs-base:bookworm');
    expect(script).toContain(`BASE_IMAGE="\${MDQS_BASE_IMAGE:-${base}}"`);
    expect(script).toMatch(/debootstrap --variant=minbase "\$SUITE"/);
    expect(script).toMatch(/--build-arg "BASE=\$BASE_IMAGE"/);
  });

  it('Node 24 is the `node` devDependency, installed in the build stage and copied into the runtime stage', () => {
    expect(pkg.devDependencies.node).toMatch(/^\^?24\./);
    expect(pkg.dependencies.node).toBeUndefined();
    const installs = ops(build, 'RUN').map((i) => i.args).filter((a) => / npm ci /.test(` ${a} `));
    // The full install (dev dependencies included, so `node`), then the production one.
    expect(installs[0]).not.toMatch(/--omit=dev/);
    expect(installs[0]).toMatch(/npm rebuild node\b/);
    expect(installs[1]).toMatch(/npm ci --omit=dev/);
    // The production install runs on that Node 24 and builds against its headers.
    expect(installs[1]).toMatch(/PATH=\/build\/node_modules\/node\/bin:\$PATH/);
    expect(installs[1]).toMatch(/npm_config_nodedir=\/build\/node_modules\/node\/node_modules\/node-linux-/);
    const copies = ops(runtime, 'COPY').map((i) => i.args);
    expect(copies).toContain('--from=build /build/node_modules/node/bin/node /usr/local/bin/node');
    // The runtime's node_modules come from the production install's directory, nothing else.
    const workdirs = build.body.filter((i) => i.op === 'WORKDIR' || (i.op === 'RUN' && /--omit=dev/.test(i.args)));
    const prodDir = workdirs[workdirs.findIndex((i) => /--omit=dev/.test(i.args)) - 1].args;
    expect(copies.filter((c) => c.includes('node_modules ') || c.endsWith('node_modules'))).toEqual([`--from=build ${prodDir}/node_modules ./node_modules`]);
  });

  it('no production dependency has an install script: the runtime stage has no compiler and runs no npm', () => {
    const scripted = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript && !p.dev).map(([name]) => name);
    expect(scripted).toEqual([]);
    expect(ops(runtime, 'RUN').map((i) => i.args).join('\n')).not.toMatch(/\bnpm\b|apt-get/);
  });

  it('runs as an unprivileged user: the uid and gid the Kubernetes manifest runs the pod as', () => {
    const users = ops(runtime, 'USER');
    expect(users).toHaveLength(1);
    expect(runtime.body.at(-1)!.op === 'USER' || runtime.body.indexOf(users[0]) > runtime.body.findLastIndex((i) => i.op === 'RUN')).toBe(true);
    const [uid, gid] = users[0].args.split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    const pod = deployment.spec.template.spec.securityContext;
    expect([pod.runAsUser, pod.runAsGroup, pod.runAsNonRoot]).toEqual([uid, gid, true]);
    expect(ops(runtime, 'RUN')[0].args).toMatch(new RegExp(`groupadd --gid ${gid} mdqs .*useradd --uid ${uid} --gid mdqs`));
    // The writable directories (history store, compile cache) belong to that user.
    expect(ops(runtime, 'RUN')[0].args).toMatch(/install -d -o mdqs -g mdqs -m 0750 \/var\/lib\/mdqs \/var\/cache\/mdqs/);
    expect(env.MDQS__history__sqlitePath).toMatch(/^\/var\/lib\/mdqs\//);
    expect(env.NODE_COMPILE_CACHE).toMatch(/^\/var\/cache\/mdqs\//);
  });

  it('starts like npm start: node itself, its flags, its environment', () => {
    // "… exec node ${MDQS_NODE_FLAGS:---max-semi-space-size=4} src/server.ts"
    const start = pkg.scripts.start;
    const [, flags, entry] = /exec node \$\{MDQS_NODE_FLAGS:-([^}]*)\} (\S+)$/.exec(start)!;
    const cmd = JSON.parse(ops(runtime, 'CMD')[0].args) as string[];
    expect(cmd).toEqual(['node', ...flags.split(' '), entry]);
    expect(deployment.spec.template.spec.containers[0].command).toEqual(cmd);
    for (const [, name, value] of start.matchAll(/(\w+)=\$\{\1:?-([^}]*)\}/g)) {
      if (name === 'NODE_COMPILE_CACHE') expect(env[name], name).toBeTruthy();
      else expect(env[name], name).toBe(value);
    }
    expect(env.NODE_ENV).toBe('production');
    expect(env.MDQS__server__pidFile).toBe('');
    expect(ops(runtime, 'STOPSIGNAL')[0].args).toBe('SIGTERM');
    expect(ops(runtime, 'WORKDIR')[0].args).toBe('/opt/mdqs');
  });

  it('exposes the configured port and checks /healthz on it', () => {
    const defaults = parseYaml(readFileSync(join(ROOT, 'config/default.yaml'), 'utf8')) as { server: { port: number } };
    expect(ops(runtime, 'EXPOSE').map((i) => i.args)).toEqual([String(defaults.server.port)]);
    const healthcheck = ops(runtime, 'HEALTHCHECK')[0].args;
    expect(healthcheck).toMatch(/^--interval=\S+ --timeout=\S+ --start-period=\S+ --retries=\d+ CMD \[/);
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    expect(command[2]).toContain(`http://127.0.0.1:\${process.env.PORT || ${defaults.server.port}}/healthz`);
  });
});

describe('.dockerignore', () => {
  const graph = serverGraph();

  it('the walk of the server\'s imports finds what it must (so the checks below have something to check)', () => {
    for (const file of ['src/main.ts', 'src/app.ts', 'config/load.ts', 'config/default.yaml', 'src/markets/holidays/cn.json', 'src/service/candle-build-worker.ts', 'adapters/sim/index.ts', 'adapters/yahoo/index.ts']) {
      expect(graph.files.has(file), file).toBe(true);
    }
    expect(graph.packages.has('fastify')).toBe(true);
    expect(graph.files.size).toBeGreaterThan(100);
  });

  it('lets in every file the server loads, and what it reads beside them', () => {
    const missing = [...graph.files].filter((file) => !contextAllows(dockerignore, file));
    expect(missing).toEqual([]);
    // Read by path rather than imported: the version (/healthz), the explorer, the demo keys file.
    for (const file of ['package.json', 'public/explorer/index.html', 'config/keys.yaml']) expect(contextAllows(dockerignore, file), file).toBe(true);
  });

  it('leaves out what the server never reads: dependencies installed on the host, tests, benchmarks, git', () => {
    for (const file of ['node_modules/fastify/package.json', 'test/deploy/container.test.ts', 'bench/run.ts', '.git/HEAD', 'BENCHMARKS.md', 'data/history.sqlite']) {
      expect(contextAllows(dockerignore, file), file).toBe(false);
    }
  });

  it('every package the server imports is a production dependency (the image has no others)', () => {
    const notProduction = [...graph.packages].filter((name) => !(name in pkg.dependencies));
    expect(notProduction).toEqual([]);
  });
});

describe('deploy/container/build-and-run.sh', () => {
  it('is valid bash and builds this Dockerfile into the image the Kubernetes manifest names', () => {
    expect(spawnSync('bash', ['-n', join(ROOT, 'deploy/container/build-and-run.sh')]).status).toBe(0);
    expect(script).toMatch(/IMAGE="\$\{MDQS_IMAGE:-localhost\/mdqs:latest\}"/);
    expect(deployment.spec.template.spec.containers[0].image).toMatch(/(^|\/)mdqs:[\w.-]+$/);
    // /healthz from inside the container, with the image's own node.
    expect(script).toMatch(/podman exec "\$CONTAINER" node -e "\$healthz"/);
  });
});
