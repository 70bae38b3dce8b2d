import type { Ctx, HostServices } from '../../../host';
import { stateSlot } from '../state';

/**
 * How a write tells the gate's clock (gate/gate-clock.ts) that an instant at which time moves a
 * gate may have come earlier (a freeze written, a change window set, a check's deadline set):
 * once the write commits, the clock reads its next instant again. Without a clock (not started)
 * nothing happens.
 */
const slot = (host: HostServices) =>
  stateSlot(host, 'gate-clock-signal', () => ({ listener: null as null | (() => void) }));

export function onTimeMoved(host: HostServices, listener: (() => void) | null): void {
  slot(host).listener = listener;
}

export function timeMoved(ctx: Ctx): void {
  const host = ctx.host;
  ctx.afterCommit(() => slot(host).listener?.());
}
