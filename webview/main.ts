// Entry point of the change request webview (bundled to dist/webview.js, loaded with a nonce).
import './styles.css';
import { PanelController, type WebviewApi } from './controller';

declare function acquireVsCodeApi(): WebviewApi;

const container = document.getElementById('root');
if (container) {
  const controller = new PanelController(document, container, acquireVsCodeApi());
  window.addEventListener('message', (event: MessageEvent) => controller.receive(event.data));
  // "3 minutes ago" stays true while the panel is open.
  setInterval(() => controller.view.tickTimes(), 30_000);
  controller.start();
}
