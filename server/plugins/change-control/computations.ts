import type { HostServices } from '../../host';
import { stateSlot } from './state';

/**
 * How often this service has computed the merge gate and the approval evaluation: the two
 * costly questions a request asks. Each request asks them at most once per change request
 * (tests count them around one request); nothing else reads the figures. Besides, how often it
 * computed a page of the change-request list and a branch's facts for the gate (its row,
 * digest and conflicts): what the read memo keeps across writes of other tables.
 */
export interface Computations {
  gate: number;
  evaluation: number;
  pages: number;
  branchFacts: number;
}

export function computations(host: HostServices): Computations {
  return stateSlot(host, 'computations', (): Computations => ({ gate: 0, evaluation: 0, pages: 0, branchFacts: 0 }));
}
