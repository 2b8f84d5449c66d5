/** A fresh, migrated database in its own temp folder, for unit tests of core modules (the suite's engine: helpers/engine.ts). */
export { freshEngineDb as freshDb } from "./engine";
