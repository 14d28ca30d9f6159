export { loadRunContext } from './context.js';
