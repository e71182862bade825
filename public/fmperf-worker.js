// fmperf's Web Worker: runs search and sweep jobs for the page (src/pool.rs) on the page's own
// WebAssembly. The page sends the compiled module first ({module}); the worker instantiates it
// with the page's wasm-bindgen glue (whose start function mounts nothing outside a window), reads
// the compiled-in catalogs (fmperf_warm_worker) and answers {ready}. Then each {job} (JSON text)
// runs to the end: {progress: [done, total]} at most every 50 ms while it runs, then {answer}
// (JSON text). A failure to start answers {failed}.
// scripts/postbuild.py fills in the glue's hashed file name below.
import init, { fmperf_run_job, fmperf_warm_worker } from './__GLUE__';

let ready = null;
self.onmessage = (event) => {
  const msg = event.data;
  if (msg.module) {
    ready = init({ module_or_path: msg.module }).then(
      () => {
        // The catalogs every job reads, read now: the first job does not wait for them.
        fmperf_warm_worker();
        self.postMessage({ ready: true });
      },
      (err) => self.postMessage({ failed: String(err) }),
    );
    return;
  }
  ready.then(() => {
    let last = 0;
    const answer = fmperf_run_job(msg.job, (done, total) => {
      const now = performance.now();
      if (now - last >= 50) {
        last = now;
        self.postMessage({ progress: [done, total] });
      }
    });
    self.postMessage({ answer });
  });
};
