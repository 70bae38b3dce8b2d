import type autocannon from 'autocannon';
import { CC } from './api';

/**
 * The pipeline's check report for autocannon, flipping each check between success and failure
 * (with a summary saying which, when `summary`). The turn and the flips carry on across loads.
 */
export function reportRequests(checks: number[], options: { summary?: boolean } = {}): autocannon.Request[] {
  let turn = 0;
  const flip = new Map<number, boolean>();
  return [
    {
      method: 'PATCH',
      setupRequest: (req: autocannon.Request) => {
        const id = checks[turn++ % checks.length]!;
        const pass = !flip.get(id);
        flip.set(id, pass);
        return {
          ...req,
          path: `${CC}checks/${id}/`,
          headers: { ...req.headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            status: pass ? 'success' : 'failure',
            ...(options.summary ? { summary: pass ? 'green' : 'red' } : {}),
          }),
        };
      },
    },
  ];
}
