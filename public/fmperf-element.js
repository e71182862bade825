// <fmperf-explorer>: fmperf as a custom element, for documentation pages.
//
//   <script type="module" src="fmperf/fmperf-element.js"></script>
//   <fmperf-explorer mode="reference" model="gpt3_1T" system="H200" domain="8" gpus="4096"></fmperf-explorer>
//
// Every attribute is passed to the app as a URL query key (the same keys as the page's permalinks);
// each element gets its own app in its own shadow root, and all share one WebAssembly instance.
// Changing an attribute after load re-renders the element with the new state.
// Serve this file from the folder that holds the rest of fmperf's dist/ (or from a host that sends
// CORS headers): it loads the app's module, WebAssembly and stylesheet relative to its own URL.
// scripts/postbuild.py fills in the hashed file names below.
import init, { mount_fmperf } from './__GLUE__';

// The app's stylesheets (hashed names), applied inside each element's shadow root.
const STYLES = __CSS_LIST__;

let ready;
function start() {
  // The app must not mount itself on the host page's body.
  globalThis.fmperfNoAutoMount = true;
  // Searches and sweeps run on Web Workers loaded from next to this script (same origin only;
  // elsewhere they run in time slices on the page).
  globalThis.fmperfWorkerUrl ??= new URL('./fmperf-worker.js', import.meta.url).href;
  ready ??= init({ module_or_path: new URL('./__WASM__', import.meta.url) });
  return ready;
}

class FmperfExplorer extends HTMLElement {
  async connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    for (const file of STYLES) {
      const css = document.createElement('link');
      css.rel = 'stylesheet';
      css.href = new URL(`./${file}`, import.meta.url).href;
      root.append(css);
    }
    const host = document.createElement('div');
    host.className = 'fmperf-host';
    root.append(host);
    await start();
    const query = () => {
      const q = new URLSearchParams();
      for (const attr of this.attributes) q.set(attr.name, attr.value);
      return q.toString();
    };
    const app = mount_fmperf(host, query());
    new MutationObserver(() => app.set_query(query())).observe(this, { attributes: true });
    this.dispatchEvent(new CustomEvent('fmperf-ready', { bubbles: true }));
  }
}

if (!customElements.get('fmperf-explorer')) customElements.define('fmperf-explorer', FmperfExplorer);
