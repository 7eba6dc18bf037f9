// bench/models/ort_worker.js — bench_models.py's ONNX Runtime side (the peer of issue's bar):
// one process per thread count, started by bench_models.py with the models' description file
// (JSON: name, onnx, inputs [.npy paths], input names, outputs [reference .npy paths]) and the
// thread count. Per model: an InferenceSession on the same ONNX file, CPU execution provider,
// graph optimisation level "all", sequential execution, intra-op threads T, inter-op 1; its
// first result is checked against the export's reference and written to NAME_ortK.npy (what
// the TDSL side is checked against). Then the protocol of bench_models.py's workers: a line
// "NAME N" on stdin runs N calls and answers {"times": [seconds...], "cpu": s, "busy": T}.
//
// With a third argument, the path of a one-element Relu model, the worker first times 200 calls
// of it and reports the median on its "ready" line in microseconds ("ready 21.5"): the cost of
// a call through Node.js and the binding, which every call of this side includes.
//
//   node bench/models/ort_worker.js MODELS.json THREADS [RELU1.onnx]   (NODE_PATH: onnxruntime-node's)
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require('onnxruntime-node');

const RTOL = 1e-3, ATOL = 1e-4;

function readNpy(path) {
  const b = fs.readFileSync(path);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not a .npy file');
  const major = b[6];
  const headerLen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(path + ': Fortran order');
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = b.subarray(start + headerLen);
  const copy = new ArrayBuffer(data.length);
  new Uint8Array(copy).set(data);
  const types = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
                 '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array]};
  if (!types[descr]) throw new Error(path + ': dtype ' + descr + ' not handled');
  const [type, Array] = types[descr];
  return new ort.Tensor(type, new Array(copy), dims);
}

function writeNpyF32(path, data, dims) {
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
      dims.join(', ') + (dims.length === 1 ? ',' : '') + '), }';
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(new Float32Array(data).buffer);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

// As bench_models.py's close(): ATOL scaled down by the output's largest magnitude below 1.
function close(got, want) {
  if (got.length !== want.length) return false;
  let scale = 0;
  for (let i = 0; i < want.length; ++i) scale = Math.max(scale, Math.abs(want[i]));
  const atol = ATOL * Math.min(1, scale);
  for (let i = 0; i < got.length; ++i)
    if (!(Math.abs(got[i] - want[i]) <= atol + RTOL * Math.abs(want[i]))) return false;
  return true;
}

async function main() {
  const [descsPath, threadsText, overheadModel] = process.argv.slice(2);
  const threads = Number(threadsText);
  const descs = JSON.parse(fs.readFileSync(descsPath, 'utf8'));
  const models = {};
  for (const d of descs) {
    const session = await ort.InferenceSession.create(d.onnx, {
      executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
      intraOpNumThreads: threads, interOpNumThreads: 1,
    });
    const feeds = {};
    d.input_names.forEach((name, i) => { feeds[name] = readNpy(d.inputs[i]); });
    const result = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      const got = result[name];
      const want = readNpy(d.outputs[k]);
      if (!close(got.data, want.data)) {
        process.stderr.write('ort_worker: ' + d.name + ' output ' + name +
                             " differs from PyTorch's export reference\n");
        process.exit(1);
      }
      writeNpyF32(d.ort_outputs[k], got.data, got.dims);
    });
    models[d.name] = {session, feeds};
  }
  let ready = 'ready';
  if (overheadModel) {
    const session = await ort.InferenceSession.create(overheadModel, {
      executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1});
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', new Float32Array([1]), [1])};
    const times = [];
    for (let i = 0; i < 220; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      if (i >= 20) times.push(Number(process.hrtime.bigint() - t0) * 1e-3);
    }
    times.sort((a, b) => a - b);
    ready += ' ' + times[times.length >> 1].toFixed(1);
  }
  process.stdout.write(ready + '\n');
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const [name, n] = line.trim().split(/\s+/);
    const m = models[name];
    const times = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < Number(n); ++i) {
      const t0 = process.hrtime.bigint();
      await m.session.run(m.feeds);
      times.push(Number(process.hrtime.bigint() - t0) * 1e-9);
    }
    const cpu = process.cpuUsage(cpu0);
    // The process's CPU time per call over the threads asked for (ORT's pool): comparable to
    // the TDSL side's busy-thread average when the pool is busy.
    process.stdout.write(JSON.stringify({
      times, cpu: (cpu.user + cpu.system) * 1e-6 / Number(n) / threads, busy: threads}) + '\n');
  }
}

main().catch((e) => {
  process.stderr.write('ort_worker: ' + (e && e.stack || e) + '\n');
  process.exit(1);
});
