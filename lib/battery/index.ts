export { defineBattery } from './defineBattery.js';
export { checkPhaseGraph } from './phaseGraph.js';
export type { PhaseGraph } from './phaseGraph.js';
export type * from './types.js';
export { EXIT_UNREADABLE, readoutHealth, readoutWarning, unreadableReadouts, type ReadoutHealth } from './readoutHealth.js';
