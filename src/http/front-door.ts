// What answers a request before Fastify routes it: empty until the fast path plugin puts the
// cache-hit fast path here (http/fast-path.ts). The HTTP server asks it first; a request it does
// not take goes to Fastify.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type FrontHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface FrontDoor {
  /** True: `handler` answered the request. */
  handle: FrontHandler;
  use(handler: FrontHandler): void;
}

export function createFrontDoor(): FrontDoor {
  let first: FrontHandler | undefined;
  return {
    handle: (req, res) => first !== undefined && first(req, res),
    use(handler) {
      if (first !== undefined) throw new Error('the front door already has a handler');
      first = handler;
    },
  };
}
