#!/usr/bin/env node
// ort_ref.js - an independent float reference for the model zoo: runs an ONNX
// model on onnxruntime-node (the CPU execution provider, no graph
// optimisations) for every NNN.npy of an input directory and writes the
// first output of each run as OUTDIR/NNN.npy (float32).
//
//   node tests/zoo/ort_ref.js MODEL.onnx INDIR OUTDIR
//
// onnxruntime-node comes from the npm registry, installed by
// tests/zoo/run_zoo.sh into the build tree from this folder's package.json and
// package-lock.json with `npm ci --ignore-scripts` (the package's install
// script downloads; the prebuilt CPU library ships inside the package).  Set
// NODE_PATH to that node_modules.  Tests only: Loom's product path is C.
// Reads .npy float32, int64 and int32 (C order, little-endian, version 1-3).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const TYPES = {
  '<f4': ['float32', Float32Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
};

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: unsupported header ${header}`);
  const t = TYPES[descr[1]];
  if (!t) throw new Error(`${file}: dtype ${descr[1]} not supported (float32, int64, int32)`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const off = start + hlen;
  const count = dims.reduce((a, d) => a * d, 1);
  const data = new t[1](b.buffer.slice(b.byteOffset + off, b.byteOffset + off + count * t[1].BYTES_PER_ELEMENT));
  return new ort.Tensor(t[0], data, dims);
}

function writeNpy(file, tensor) {
  const data = tensor.type === 'float32' ? tensor.data : Float32Array.from(tensor.data, Number);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const h = Buffer.alloc(10);
  h.write('\x93NUMPY', 0, 'latin1');
  h[6] = 1;
  h[7] = 0;
  h.writeUInt16LE(header.length, 8);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, Buffer.concat([h, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
  fs.renameSync(tmp, file);
}

async function main() {
  const [model, indir, outdir] = process.argv.slice(2);
  if (!outdir) {
    console.error('usage: node ort_ref.js MODEL.onnx INDIR OUTDIR');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'disabled', intraOpNumThreads: 1,
  });
  fs.mkdirSync(outdir, { recursive: true });
  const files = fs.readdirSync(indir).filter((f) => /^\d+\.npy$/.test(f)).sort();
  for (const f of files) {
    const feeds = { [session.inputNames[0]]: readNpy(path.join(indir, f)) };
    const out = await session.run(feeds);
    writeNpy(path.join(outdir, f), out[session.outputNames[0]]);
  }
  console.log(`ort_ref: ${path.basename(path.dirname(model))}: ${files.length} outputs (onnxruntime-node ${require('onnxruntime-node/package.json').version})`);
}

main().catch((e) => {
  console.error(`ort_ref: ${process.argv[2]}: ${e.message}`);
  process.exit(1);
});
