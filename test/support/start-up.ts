// What the tests turn on before anything else, once for every test file.
import { auditMemoReads } from '../../server/host/db/read-audit';

// Every memoized answer must name every table it reads: a statement reading another fails the test.
auditMemoReads(true);
