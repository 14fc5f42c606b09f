// cache.calendarMemoMaxBytes reaches the calendar's memos through buildApp (issue 15 item 4).
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadDefaultConfig } from '../../config/load.ts';
import { calendarMemoStats, DEFAULT_CALENDAR_MEMO_MAX_BYTES } from '../../src/markets/calendar.ts';
import { buildTestApp } from '../helpers/app.ts';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('cache.calendarMemoMaxBytes', () => {
  it('is applied by buildApp, and the default config gives 4 MiB', async () => {
    ({ app } = await buildTestApp({ configure: (c) => { c.cache.calendarMemoMaxBytes = 123_456; } }));
    expect(calendarMemoStats().maxBytes).toBe(123_456);
    await app.close();
    ({ app } = await buildTestApp());
    expect(calendarMemoStats().maxBytes).toBe(DEFAULT_CALENDAR_MEMO_MAX_BYTES);
    expect(loadDefaultConfig().cache.calendarMemoMaxBytes).toBe(DEFAULT_CALENDAR_MEMO_MAX_BYTES);
  });
});
