export { xvalueDataFiles, xvalueDesignSchema } from './designSchema.js';
export type { XvalueDesign } from './designSchema.js';
export { firstPerCell, loadXvalueDesign } from './loadXvalueDesign.js';
export type { XvalueData } from './loadXvalueDesign.js';
