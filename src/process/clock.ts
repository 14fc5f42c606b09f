// The service's clock. Real time, unless MDQS_CLOCK_START names another starting instant: then the
// service's time starts there and runs at real speed (sessions, the forming bar, closes and
// retention follow it; timeouts, rate-limit windows and leases stay on the real clock). It exists
// so a real process can be tested or demonstrated at a chosen market hour (a CN session on a
// weekend, a night before a holiday) without libfaketime, which Redis does not run under. Never
// set it in production: vendors answer for the real time.
export interface ServiceClock {
  now: () => number;
  /** The instant the override named, when there is one. */
  startedAt?: number;
}

/** From MDQS_CLOCK_START (ISO 8601 with a zone offset, e.g. 2026-11-25T10:30:00+08:00, or epoch ms); throws naming a bad value. */
export function serviceClock(start: string | undefined, real: () => number = Date.now): ServiceClock {
  if (start === undefined || start.trim() === '') return { now: real };
  const text = start.trim();
  const at = /^\d+$/.test(text) ? Number(text) : /(Z|[+-]\d\d:?\d\d)$/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(at)) {
    throw new Error(`MDQS_CLOCK_START: expected an ISO 8601 time with its zone offset (e.g. 2026-11-25T10:30:00+08:00) or epoch ms, got ${JSON.stringify(start)}`);
  }
  const offset = at - real();
  return { now: () => real() + offset, startedAt: at };
}
