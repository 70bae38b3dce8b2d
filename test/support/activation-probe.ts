// Run by plain Node (bundled by activation.ts, never through tsx): loads a built extension bundle
// with the fake `vscode` module, calls activate(), and prints one JSON line: how long loading the
// bundle and activate() took, what the extension registered, and the synchronous file, process
// and network work activate() did. Exits as soon as activate() returns, before any of the work it
// started in the background runs.
//   node probe.js <bundle> <extension folder> <storage folder> [--modules]
// With --modules it also says which of the bundle's lazily evaluated modules ran by the end of
// activate() (V8's coverage of esbuild's per-module wrappers, named by source path in an
// unminified bundle); that slows the load, so the times are then not the ones to report.
// (`import x = require()`: the modules themselves, whose functions can be replaced, rather than
// the bundler's read-only copies of their exports.)
import childProcess = require('node:child_process');
import fs = require('node:fs');
import http = require('node:http');
import https = require('node:https');
import inspector = require('node:inspector');
import Module = require('node:module');
import net = require('node:net');
import { performance } from 'node:perf_hooks';
import { fakeExtensionContext, fakeVscode } from './fake-vscode';

export interface ProbeResult {
  /** Milliseconds to require() the bundle (read, compile, run its top level). */
  loadMs: number;
  /** Milliseconds for activate() to return. */
  activateMs: number;
  /** The calls to synchronous file, process or network functions made inside activate(). */
  syncWork: string[];
  commands: string[];
  treeViews: string[];
  commentControllers: string[];
  fileSystemProviders: string[];
  webviewSerializers: string[];
  /** With --modules: the bundle's lazily evaluated modules that ran by the end of activate(), and those that did not. */
  evaluated?: string[];
  deferred?: string[];
  /** Why the bundle could not be loaded or activated. */
  error?: string;
}

const [bundle, extensionPath, storage, flag] = process.argv.slice(2);
if (!bundle || !extensionPath || !storage)
  throw new Error('usage: probe <bundle> <extension folder> <storage folder> [--modules]');

/** V8's coverage, on when asked for (the session answers synchronously on the main thread). */
const session = flag === '--modules' ? new inspector.Session() : null;
function post<T>(method: string, params?: object): T {
  let out: { error: Error | null; result?: T } | undefined;
  session!.post(method, params, (error, result) => (out = { error, result: result as T }));
  if (!out || out.error) throw out?.error ?? new Error(`${method}: no synchronous answer`);
  return out.result!;
}
if (session) {
  session.connect();
  post('Profiler.enable');
  post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
}

/** esbuild wraps each lazily evaluated module in a function named by its source path. */
const MODULE_WRAPPER = /^(node_modules|extension|contract|webview)\/.+\.(ts|js|cjs|mjs)$/;
interface Coverage {
  result: Array<{ url: string; functions: Array<{ functionName: string; ranges: Array<{ count: number }> }> }>;
}
function lazyModules(): { evaluated: string[]; deferred: string[] } {
  const evaluated = new Set<string>();
  const deferred = new Set<string>();
  for (const script of post<Coverage>('Profiler.takePreciseCoverage').result) {
    if (!script.url.endsWith(bundle!.split('/').pop()!)) continue;
    for (const fn of script.functions) {
      if (!MODULE_WRAPPER.test(fn.functionName)) continue;
      (fn.ranges[0]!.count > 0 ? evaluated : deferred).add(fn.functionName);
    }
  }
  return { evaluated: [...evaluated].sort(), deferred: [...deferred].filter((m) => !evaluated.has(m)).sort() };
}

const { api, record } = fakeVscode();
const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const load = loader._load;
loader._load = function (request, parent, isMain) {
  return request === 'vscode' ? api : load.call(this, request, parent, isMain);
};

/** Replaces each listed function of `target` by one that notes the call while `watching`. */
const syncWork: string[] = [];
let watching = false;
function watch(name: string, target: object, keys: string[]): void {
  const t = target as Record<string, unknown>;
  for (const key of keys) {
    const original = t[key];
    if (typeof original !== 'function') continue;
    t[key] = function (this: unknown, ...args: unknown[]) {
      if (watching) syncWork.push(`${name}.${key}(${typeof args[0] === 'string' ? args[0] : ''})`);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
}
watch(
  'fs',
  fs,
  Object.keys(fs).filter((k) => k.endsWith('Sync')),
);
watch('child_process', childProcess, ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']);
watch('net', net, ['connect', 'createConnection']);
watch('http', http, ['request', 'get']);
watch('https', https, ['request', 'get']);
const fetchOriginal = globalThis.fetch;
globalThis.fetch = (...args: Parameters<typeof fetch>) => {
  if (watching) syncWork.push(`fetch(${String(args[0])})`);
  return fetchOriginal(...args);
};

const packageJSON = JSON.parse(fs.readFileSync(`${extensionPath}/package.json`, 'utf8')) as unknown;
const context = fakeExtensionContext(extensionPath, storage, packageJSON);

const result: ProbeResult = {
  loadMs: NaN,
  activateMs: NaN,
  syncWork,
  commands: [],
  treeViews: [],
  commentControllers: [],
  fileSystemProviders: [],
  webviewSerializers: [],
};
try {
  const t0 = performance.now();
  const extension = require(bundle) as { activate(context: unknown): unknown };
  const t1 = performance.now();
  watching = true;
  extension.activate(context);
  watching = false;
  const t2 = performance.now();
  Object.assign(result, { loadMs: t1 - t0, activateMs: t2 - t1 });
  if (session) Object.assign(result, lazyModules());
} catch (e) {
  watching = false;
  result.error = (e as Error).stack ?? String(e);
}
Object.assign(result, {
  commands: record.commands,
  treeViews: record.treeViews,
  commentControllers: record.commentControllers,
  fileSystemProviders: record.fileSystemProviders,
  webviewSerializers: record.webviewSerializers,
});
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
