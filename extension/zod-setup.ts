// Imported first by extension.ts, before any schema is built. Zod compiles object parsers with
// `new Function` unless told not to, and to learn whether it may, it reads `navigator`, which
// VS Code's extension host (Node.js 21 and newer) reports as an error on every activation. The
// extension's parsers run without compiling instead (the lists it parses are small enough).
// Only zod's core is loaded here: the schemas, and zod with them, load with the API client.
import { config } from 'zod/v4/core';

config({ jitless: true });
