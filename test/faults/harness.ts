// One app per fault case, its adapters on the production HTTP layer (productionDeps), pointed at
// a fake vendor; a short service deadline; every answer timed and, when 200, checked against the
// invariants of docs/contract.md#shapes-and-units.
import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { createAdapters, productionDeps } from '../../src/upstream/registry.ts';
import type { Adapter } from '../../adapters/types.ts';
import { buildTestApp, KEYS } from '../helpers/app.ts';
import { servedProblems } from './invariants.ts';

/** The service deadline in every case (upstream.deadlineMs). */
export const DEADLINE_MS = 500;
/**
 * An answer must come within the deadline plus this much (scheduling on a loaded 2-core box,
 * a fresh app's first request). The defects this guards against answered after 4–30 s, or never.
 */
export const SLACK_MS = 1_000;

export const RID = 'fault-matrix-1';

export interface Answer {
  res: LightMyRequestResponse;
  ms: number;
  body: Record<string, unknown>;
}

export interface CaseApp {
  app: FastifyInstance;
  adapters: Map<string, Adapter>;
}

/** Build the app with `configure` applied, the adapters made from that config with real HTTP. */
export async function buildFaultApp(now: number, configure: (c: Config) => void): Promise<CaseApp> {
  const config = loadDefaultConfig();
  configure(config);
  config.upstream.deadlineMs = DEADLINE_MS;
  const adapters = createAdapters(config.routing, config.adapters, productionDeps(() => now));
  const { app } = await buildTestApp({
    now: () => now,
    adapters,
    configure: (c) => {
      configure(c);
      c.upstream.deadlineMs = DEADLINE_MS;
    },
  });
  return { app, adapters };
}

export async function closeFaultApp(built: CaseApp): Promise<void> {
  await built.app.close();
  await Promise.all([...built.adapters.values()].map((a) => a.close?.()));
}

/** GET with the demo key; timed; the body parsed (a non-JSON body fails here). */
export async function timedGet(app: FastifyInstance, url: string): Promise<Answer> {
  const started = performance.now();
  const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': KEYS.demo, 'x-request-id': RID } });
  const ms = performance.now() - started;
  let body: Record<string, unknown>;
  try {
    body = res.json();
  } catch {
    throw new Error(`${url}: non-JSON ${res.statusCode} body: ${res.body.slice(0, 200)}`);
  }
  return { res, ms, body };
}

/** Status, reason, the error contract, the time bound, and the invariants of anything served. */
export function expectAnswer(answer: Answer, status: number, error?: string): void {
  const { res, ms, body } = answer;
  const summary = `${res.statusCode} ${JSON.stringify(body).slice(0, 300)}`;
  expect(res.statusCode, summary).toBe(status);
  expect(ms, `answered after ${Math.round(ms)} ms (deadline ${DEADLINE_MS} ms)`).toBeLessThanOrEqual(DEADLINE_MS + SLACK_MS);
  if (status === 200) {
    expect(servedProblems(body), 'served rows break the contract\'s invariants').toEqual([]);
    return;
  }
  expect(res.headers['cache-control']).toBe('no-store');
  expect(body).toMatchObject({ code: status, request_id: RID });
  if (error !== undefined) expect(body.error, summary).toBe(error);
  expect(typeof body.message).toBe('string');
}
