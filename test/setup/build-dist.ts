/** vitest globalSetup: build dist/ once before any test file starts the compiled gateway. */
import { ensureBuilt } from '../../scripts/dist.js';

export default function setup(): void {
  ensureBuilt();
}
