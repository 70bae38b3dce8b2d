// Imported first by extension.ts, before any schema is built. Zod compiles object parsers with
// `new Function` unless told not to, and to learn whether it may, it reads `navigator`, which
// VS Code's extension host (Node.js 21 and newer) reports as an error on every activation. The
// extension's parsers run without compiling instead (the lists it parses are small enough).
import { z } from 'zod';

z.config({ jitless: true });
