/**
 * What the worker uses of jobs: the service (by type; it settles a job's outcome and its
 * usage), the job's view and its webhook context, and the store operations on the lease
 * columns of the job rows (claim, extend, release): those are the rows finish() and cancel()
 * check the owner of, so their SQL stays with the rest of the job rows.
 */
export type { TrawlContext } from "./events";
export type { JobService } from "./service";
export { claimDue, claimExhausted, extendLease, release, type JobRow } from "./store";
export { jobView } from "./views";
