/**
 * Injectable clock. Domain code asks the clock for time so tests can move it
 * forward (lock-outs, retry schedules, expiries) instead of sleeping.
 */
export interface Clock {
  now(): Date;
  nowMs(): number;
  /** ISO 8601 UTC string of now. */
  iso(): string;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
  iso: () => new Date().toISOString(),
};

/** A clock tests drive by hand. Starts at the given instant (default: real now). */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | number = Date.now()) {
    this.ms = typeof start === "number" ? start : start.getTime();
  }
  now() {
    return new Date(this.ms);
  }
  nowMs() {
    return this.ms;
  }
  iso() {
    return new Date(this.ms).toISOString();
  }
  advance(ms: number) {
    this.ms += ms;
  }
  set(at: Date | number) {
    this.ms = typeof at === "number" ? at : at.getTime();
  }
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
