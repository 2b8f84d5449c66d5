/**
 * A value now or later. The token-check hot paths (/me, /verify, introspection) answer a
 * token already verified without any promise: over a socket every await costs a microtask
 * turn and delays the response write, about half a microsecond each under load.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `fn(value)` at once for a plain value, after it settles for a promise. A throw from fn propagates the same way. */
export function andThen<T, R>(value: MaybePromise<T>, fn: (v: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
