import type { Ctx } from '../../../host';
import { enabledFreezes, freezeNotices } from '../freezes/repository';
import { attachedPolicySummaries } from '../policies/attached-repository';

export interface HoldingFreeze {
  id: number;
  name: string;
  /** When it lets go (the last of the freezes in force that apply, ends). */
  end: string;
}

/**
 * Which of these queued requests a freeze in force holds now (global freezes, and those of the
 * policies governing each actively): the queue leaves them in their place and merges them once
 * the freeze ends (the gate's clock runs the queue then), rather than failing them.
 */
export async function freezesHolding(
  ctx: Ctx,
  changeRequestIds: readonly number[],
): Promise<Map<number, HoldingFreeze>> {
  const out = new Map<number, HoldingFreeze>();
  if (changeRequestIds.length === 0) return out;
  const freezes = await enabledFreezes(ctx);
  if (freezes.length === 0) return out;
  const attached = await attachedPolicySummaries(ctx, changeRequestIds);
  const now = ctx.host.clock.now();
  for (const id of changeRequestIds) {
    const policyIds = attached.filter((a) => a.cr === id && a.enforcement !== 'evaluate').map((a) => a.id);
    const active = freezeNotices(freezes, policyIds, now).filter((f) => f.active);
    if (active.length === 0) continue;
    const last = active.reduce((a, b) => (b.end > a.end ? b : a));
    out.set(id, { id: last.id, name: last.name, end: last.end });
  }
  return out;
}
