// The stream's per-key counts against the plan caps (limits.ts): connections and subscriptions
// per owner (a key's id, or for the free tier its client's address), and connections admitted
// before their upgrade (tickets). With a fleet (fleet.ts) the caps are checked in Redis too and
// this process's members are what its heartbeat rewrites; while Redis is down each process
// admits its share.
import { addressBucket } from '../access/auth-failures.ts';
import type { KeyEntry } from '../access/keys.ts';
import type { FleetMember, StreamFleet } from './fleet.ts';
import { maxConnections } from './limits.ts';

/** A reserved connection whose upgrade never completed is given back after this long, ms. */
const UNCLAIMED_MS = 10_000;

export function isAnonymous(entry: KeyEntry): boolean {
  return (entry as KeyEntry & { anonymous?: boolean }).anonymous === true;
}

/** Whose caps a connection counts against: its key's id, or for the free tier its client's address. */
export function ownerOf(entry: KeyEntry, ip: string | undefined): string {
  return isAnonymous(entry) ? `anon:${addressBucket(ip ?? '')}` : entry.id;
}

/** A connection admitted before the upgrade (hub.reserve), to be attached with it. */
export interface ConnectionTicket {
  readonly id: number;
  readonly owner: string;
  claimed: boolean;
  timer?: NodeJS.Timeout;
}

export interface KeyState {
  connections: number;
  subscriptions: number;
}

export class StreamCaps {
  readonly #fleet: StreamFleet | undefined;
  readonly #keys = new Map<string, KeyState>();
  /** Connections reserved before their upgrade, not attached yet. */
  readonly #tickets = new Map<number, ConnectionTicket>();
  #nextId = 1;

  constructor(fleet: StreamFleet | undefined) {
    this.#fleet = fleet;
  }

  nextId(): number {
    return this.#nextId++;
  }

  state(owner: string): KeyState {
    let state = this.#keys.get(owner);
    if (state === undefined) {
      state = { connections: 0, subscriptions: 0 };
      this.#keys.set(owner, state);
    }
    return state;
  }

  /** The owner's counts if it has any (never creates them). */
  peek(owner: string): KeyState | undefined {
    return this.#keys.get(owner);
  }

  /** Forgets an owner with nothing left. */
  tidy(owner: string): void {
    const state = this.#keys.get(owner);
    if (state !== undefined && state.connections <= 0 && state.subscriptions <= 0) this.#keys.delete(owner);
  }

  /** A cap as this process applies it: whole with Redis (the fleet checks too) or alone, its share while Redis is down. */
  localCap(cap: number): number {
    const fleet = this.#fleet;
    return fleet === undefined || fleet.up ? cap : fleet.share(cap);
  }

  admits(entry: KeyEntry, ip?: string): boolean {
    return (this.#keys.get(ownerOf(entry, ip))?.connections ?? 0) < this.localCap(maxConnections(entry.plan));
  }

  /** Admits one more connection before the upgrade (fleet-wide with a fleet): a ticket, or undefined (over the cap). */
  async reserve(entry: KeyEntry, ip?: string): Promise<ConnectionTicket | undefined> {
    if (!this.admits(entry, ip)) return undefined;
    const ticket: ConnectionTicket = { id: this.nextId(), owner: ownerOf(entry, ip), claimed: false };
    const state = this.state(ticket.owner);
    state.connections += 1;
    this.#tickets.set(ticket.id, ticket);
    const fleet = this.#fleet;
    if (fleet !== undefined) {
      const cap = maxConnections(entry.plan);
      const fleetWide = await fleet.connect(ticket.owner, fleet.member(ticket.id), cap);
      // Redis unavailable: this process's share of the cap.
      if (!(fleetWide ?? state.connections <= fleet.share(cap))) {
        this.unreserve(ticket);
        return undefined;
      }
    }
    if (!ticket.claimed) {
      ticket.timer = setTimeout(() => this.unreserve(ticket), UNCLAIMED_MS);
      ticket.timer.unref();
    }
    return ticket;
  }

  /** A reserved connection that was never attached: its place is given back. */
  unreserve(ticket: ConnectionTicket): void {
    if (ticket.claimed || !this.#tickets.delete(ticket.id)) return;
    if (ticket.timer !== undefined) clearTimeout(ticket.timer);
    this.state(ticket.owner).connections -= 1;
    this.tidy(ticket.owner);
    this.#fleet?.disconnect(ticket.owner, this.#fleet.member(ticket.id));
  }

  /** Attaching with `ticket`: true when it was reserved (and is counted already). */
  claim(ticket: ConnectionTicket | undefined): ticket is ConnectionTicket {
    const reserved = ticket !== undefined && !ticket.claimed && this.#tickets.delete(ticket.id);
    if (reserved) {
      ticket.claimed = true;
      if (ticket.timer !== undefined) clearTimeout(ticket.timer);
    }
    return reserved;
  }

  /** Members of reserved, unattached connections (for the fleet heartbeat). */
  ticketMembers(fleet: StreamFleet): FleetMember[] {
    return [...this.#tickets.values()].map((ticket) => ({ owner: ticket.owner, member: fleet.member(ticket.id), subscriptions: 0 }));
  }
}
