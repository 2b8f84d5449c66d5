/** What the other features of the community use of the graph: blocks (checked before content reaches across one), and an actor's removal from it. */
export { blockBetween, detachActor } from "./store";
