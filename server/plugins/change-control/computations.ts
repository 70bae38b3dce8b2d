import type { HostServices } from '../../host';
import { stateSlot } from './state';

/**
 * How often this service has computed the merge gate and the approval evaluation: the two
 * costly questions a request asks. Each request asks them at most once per change request
 * (tests count them around one request); nothing else reads the figures.
 */
export interface Computations {
  gate: number;
  evaluation: number;
}

export function computations(host: HostServices): Computations {
  return stateSlot(host, 'computations', (): Computations => ({ gate: 0, evaluation: 0 }));
}
