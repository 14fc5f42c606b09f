// Keys never reach a log line: the api_key query parameter (also percent-encoded as api%5Fkey)
// is masked wherever a URL is logged.
const API_KEY_PARAM = /([?&]api(?:_|%5f)key=)[^&#]*/gi;
const MENTIONS_KEY = /api(?:_|%5f)key/i;

export function redactUrl(url: string): string {
  return MENTIONS_KEY.test(url) ? url.replace(API_KEY_PARAM, '$1[redacted]') : url;
}
