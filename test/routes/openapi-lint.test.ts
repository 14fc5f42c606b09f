// The OpenAPI document the app serves passes `redocly lint` with the recommended rules (issue 43
// item 9), as configured in redocly.yaml: both /v1/openapi.json and the /docs UI's /docs/json
// (which names the demo key), written to files and linted by the Redocly CLI, no error and no
// warning. A mutilated copy linted in the same run proves the rules are on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/app.ts';
import { docKeyStore, servedDoc } from '../helpers/openapi.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

interface Problem { ruleId: string; severity: string; message: string; location: { source: { ref: string }; pointer: string }[] }

let app: FastifyInstance;
let dir: string;
beforeAll(async () => {
  ({ app } = await buildTestApp({ keys: docKeyStore() }));
  dir = mkdtempSync(join(tmpdir(), 'mdqs-openapi-lint-'));
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `redocly lint` of the files, with the committed config: every problem, by file name. */
function lint(files: Record<string, unknown>): Record<string, Problem[]> {
  const paths = Object.entries(files).map(([name, doc]) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc));
    return path;
  });
  const run = spawnSync(process.execPath, [CLI, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format=json', ...paths], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  // One JSON report per file, one after the other.
  const start = run.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly lint printed no report (exit ${run.status}): ${run.stderr.slice(0, 2000)}`);
  const reports = JSON.parse(`[${run.stdout.slice(start).replace(/\}\s*\{(?=\s*"totals")/g, '},{')}]`) as { problems: Problem[] }[];
  expect(reports).toHaveLength(paths.length);
  const byFile: Record<string, Problem[]> = Object.fromEntries(Object.keys(files).map((name) => [name, []]));
  for (const problem of reports.flatMap((r) => r.problems)) {
    const name = Object.keys(files).find((n) => problem.location[0]?.source.ref.endsWith(n));
    byFile[name ?? '?'] = [...(byFile[name ?? '?'] ?? []), problem];
  }
  return byFile;
}

const summary = (problems: Problem[]) => problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);

it('the served document has no error and no warning; the rules do bite', { timeout: 90_000 }, async () => {
  const served = await servedDoc(app);
  const ui = await servedDoc(app, '/docs/json');
  // What the issue found: no servers, no licence, no operationId, placeholder examples, a WebSocket
  // route without its 101, a route without a 4XX.
  const broken = structuredClone(served) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  delete broken.servers;
  delete broken.info.license;
  delete broken.paths['/v1/quotes'].get.operationId;
  broken.paths['/v1/calendar'].get.responses['200'].content['application/json'].example.start = 'string';
  delete broken.paths['/v1/ws/stream'].get.responses['101'];
  for (const status of ['400', '431']) delete broken.paths['/v1/meta'].get.responses[status];

  const problems = lint({ 'openapi.json': served, 'docs.json': ui, 'broken.json': broken });
  expect(summary(problems['openapi.json'])).toEqual([]);
  expect(summary(problems['docs.json'])).toEqual([]);
  expect(problems['?']).toBeUndefined();
  expect(problems['broken.json'].map((p) => p.ruleId).sort()).toEqual([
    'info-license', 'no-empty-servers', 'no-invalid-media-type-examples', 'operation-4xx-response', 'operation-operationId',
    'rule/operation-success-response',
  ]);
});
