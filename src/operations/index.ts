// operations/: health, metrics and retention.
// The public face of the module: other modules import only this file (.dependency-cruiser.cjs).
export { Metrics } from './metrics.js';
export { OperationsModule } from './operations.module.js';
