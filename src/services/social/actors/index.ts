/**
 * What the other features of the community use of actors: the lane every feature starts
 * with, the actor's view, and the store operations they run in their own transaction (an
 * actor's counters move with the write that changed them; moderation changes its state).
 */
export { actorPair, Lane, type ActorRow } from "./lane";
export { actorView } from "./service";
export { actorsByIds, bumpCounter, reinstateActor, shadowBanActor, suspendActor, type CounterName } from "./store";
