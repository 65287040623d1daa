// Unpacking the packages' and the book's images (gzip files; boot.mjs) on a thread of
// their own, while the page's worker starts the runtime (measured: the packages'
// image, 94 MB unpacked, took about half a second of the worker's thread). One file in
// two roles: worker.mjs calls unpackOffThread(), which starts this same file as a
// worker of the worker (named UNPACKER); that helper unpacks the files it is sent, one
// at a time, in the order sent.
import { gunzip } from "./boot.mjs";

const UNPACKER = "attn-unpack";

// {unpack, stop, unpackedHere}. The helper starts at once; unpack(bytes) -> promise of
// the bytes unpacked by it; stop() ends it; unpackedHere() counts the files unpacked on
// this thread instead. The input is copied to the helper, not transferred, so that
// where the helper cannot start (no workers inside workers, or no `Worker` at all, as
// under Node) or cannot unpack (no DecompressionStream there), or fails (an uncaught
// error, a message it cannot read, any failure but bad data), each file is unpacked on
// this thread. A file that is not valid gzip is not tried again: its promise fails with
// the helper's message.
export function unpackOffThread({ url = import.meta.url, Worker = globalThis.Worker } = {}) {
  let helper = null;
  let here = 0;
  let next = 0;
  const waiting = new Map();
  const unpackHere = (bytes) => {
    here += 1;
    return gunzip(bytes);
  };
  const fallBack = (event) => {
    // an uncaught error in the helper would also reach the page's own handlers
    if (event && event.preventDefault) event.preventDefault();
    if (helper) helper.terminate();
    helper = null;
    for (const job of waiting.values()) unpackHere(job.bytes).then(job.resolve, job.reject);
    waiting.clear();
  };
  if (typeof Worker === "function") {
    try {
      helper = new Worker(url, { type: "module", name: UNPACKER });
      helper.onmessage = ({ data }) => {
        const job = waiting.get(data.id);
        if (!job || data.cannot) return fallBack();
        waiting.delete(data.id);
        if (data.error) job.reject(new Error(data.error));
        else job.resolve(data.files);
      };
      helper.onerror = fallBack;
      helper.onmessageerror = fallBack;
    } catch (error) {
      helper = null;
    }
  }
  const unpack = (bytes) => {
    if (!helper) return unpackHere(bytes);
    return new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { bytes, resolve, reject });
      helper.postMessage({ id, bytes });
    });
  };
  const stop = () => {
    if (helper) helper.terminate();
    helper = null; // a later unpack() is done here, not sent to a stopped worker
  };
  return { unpack, stop, unpackedHere: () => here };
}

// The helper's side: {id, bytes} in; {id, files} (transferred) out, or {id, error}
// (not valid gzip: DecompressionStream fails with a TypeError), or {cannot} (any other
// failure: it cannot unpack here, could not read a message, ran out of memory...).
if (typeof WorkerGlobalScope !== "undefined" && self.name === UNPACKER) {
  let queue = Promise.resolve();
  self.onmessageerror = () => self.postMessage({ cannot: true });
  self.onmessage = ({ data: { id, bytes } }) => {
    queue = queue.then(async () => {
      if (typeof DecompressionStream === "undefined") {
        self.postMessage({ id, cannot: true });
        return;
      }
      try {
        const files = await gunzip(bytes);
        self.postMessage({ id, files }, [files.buffer]);
      } catch (error) {
        if (error instanceof TypeError) self.postMessage({ id, error: String(error.message) });
        else self.postMessage({ id, cannot: true });
      }
    });
  };
}
