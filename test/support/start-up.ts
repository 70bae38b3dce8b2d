// What the service does at start-up before anything else, done once for every test file (some
// test domain modules without creating an app).
import { enableLinearRegExps } from '../../server/host/core/linear-regexp';
import { auditMemoReads } from '../../server/host/db/read-audit';

enableLinearRegExps();

// Every memoized answer must name every table it reads: a statement reading another fails the test.
auditMemoReads(true);
