// Unpacking the gzip files the start fetches (the snapshot, the packages' image, the
// book's image) on a thread of their own, while the page's worker starts the runtime
// (measured: the packages' image, 94 MB unpacked, took about half a second of the
// worker's thread). One file in two roles: worker.mjs imports unpackOffThread(), which
// starts this same file as a worker of the worker (named UNPACKER); that worker
// unpacks the files it is sent, one at a time in the order sent (the snapshot first:
// boot.mjs).
import { gunzip } from "./boot.mjs";

const UNPACKER = "attn-unpack";

// {unpack, stop, here}: unpack(bytes) -> promise of the bytes unpacked, by the helper
// worker, started on the first call; stop() ends that worker; here() counts the files
// unpacked on this thread instead. The input is copied to the helper, not transferred,
// so that where it cannot start (no workers inside workers, or `Worker` is missing, as
// under Node) or it fails (e.g. no DecompressionStream there), each file is unpacked
// on this thread.
export function unpackOffThread({ url = import.meta.url, Worker = globalThis.Worker } = {}) {
  let helper;
  let here = 0;
  let next = 0;
  const waiting = new Map();
  const unpackHere = (bytes) => {
    here += 1;
    return gunzip(bytes);
  };
  const fallBack = () => {
    if (helper) helper.terminate();
    helper = null;
    for (const job of waiting.values()) unpackHere(job.bytes).then(job.resolve, job.reject);
    waiting.clear();
  };
  const start = () => {
    try {
      helper = new Worker(url, { type: "module", name: UNPACKER });
    } catch (error) {
      helper = null;
      return;
    }
    helper.onmessage = ({ data }) => {
      const job = waiting.get(data.id);
      if (!job) return;
      if (data.error) return fallBack();
      waiting.delete(data.id);
      job.resolve(data.files);
    };
    helper.onerror = fallBack;
  };
  const unpack = (bytes) => {
    if (helper === undefined && typeof Worker === "function") start();
    if (!helper) return unpackHere(bytes);
    return new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { bytes, resolve, reject });
      helper.postMessage({ id, bytes });
    });
  };
  return { unpack, stop: () => helper && helper.terminate(), here: () => here };
}

// The helper's side: {id, bytes} in; {id, files} (transferred) or {id, error} out.
if (typeof WorkerGlobalScope !== "undefined" && self.name === UNPACKER) {
  let queue = Promise.resolve();
  self.onmessage = ({ data: { id, bytes } }) => {
    queue = queue.then(async () => {
      try {
        const files = await gunzip(bytes);
        self.postMessage({ id, files }, [files.buffer]);
      } catch (error) {
        self.postMessage({ id, error: String((error && error.message) || error) });
      }
    });
  };
}
