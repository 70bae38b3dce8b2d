// esbuild bundles the stylesheet imported by webview/main.ts into dist/webview.css.
declare module '*.css';
