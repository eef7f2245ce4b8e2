"""loom - run Loom models (.loom files) from Python, with NumPy arrays.

A thin layer over libloom, the Loom runtime (include/loom/loom.h), through
ctypes: nothing to compile, so a notebook on a board (PYNQ, Kria) can use
it as soon as `make install` has put libloom.so and this package in place.

    import numpy as np
    import loom

    with loom.Device("fsim") as dev:        # "tsim", "linux" (loom.ko), "xrt"
        model = dev.load("digits_cnn.loom")
        print(model.inputs)                   # [Tensor(name='input', ...)]
        out = model(input=np.zeros((1, 1, 8, 8), np.float32))
        print(out["output"], model.counters()["GEMM_OPS"])

The same steps one by one: model.set_input(name, array), model.run(),
model.output(name), model.counters() (summed over the model's jobs) or
model.job_counters(j).  Every failure raises LoomError with libloom's
message (the status is in .status).  Outputs are bit for bit what
`loom run` writes for the same inputs.

A Device and the Models loaded on it must be used by one thread at a time;
close() (or the with block) frees them, models first.
"""

import collections
import ctypes

import numpy as np

from . import _capi

__all__ = ["Device", "Model", "Tensor", "LoomError", "version", "backends", "COUNTERS"]

COUNTERS = _capi.COUNTER_NAMES
"""The names of the hardware counters, in the library's order."""

Tensor = collections.namedtuple("Tensor", "name dtype shape scale zero_point")
Tensor.__doc__ = """An input or output: NumPy dtype and shape the user reads or
writes, and the quantization of the stored tensor (scale 0: none)."""


class LoomError(RuntimeError):
    """A libloom call failed: .status is the loom_status name ("JOB",
    "TIMEOUT", "CONFIG"...), the message says what was wrong."""

    def __init__(self, status, message):
        self.status = _capi.lib.loom_status_name(status).decode()
        super().__init__("%s (%s)" % (message, self.status))


def version():
    """The library's version ("0.1.0")."""
    return _capi.lib.loom_version().decode()


def backends():
    """The backends compiled into the library."""
    names = _capi.lib.loom_backend_names()
    out, i = [], 0
    while names[i]:
        out.append(names[i].decode())
        i += 1
    return out


def _np_dtype(loom_dtype):
    name = _capi.lib.loom_dtype_name(loom_dtype).decode()
    if name == "bfloat16":
        return np.dtype(np.uint16)  # NumPy has none: the raw bits
    return np.dtype(name)


def _tensor(info):
    dims = tuple(info.dims[i] for i in range(info.rank))
    return Tensor(info.name.decode(), _np_dtype(info.dtype), dims, info.scale, info.zero_point)


class Device:
    """An open accelerator: a backend name and its "key=value,..." options
    (for example Device("tsim", "config=tiny"), Device("linux",
    "dev=/dev/loom1"))."""

    def __init__(self, backend="fsim", options=None):
        msg = ctypes.create_string_buffer(_capi.MSG_MAX)
        handle = _capi.c_handle()
        st = _capi.lib.loom_device_open(
            backend.encode(), options.encode() if options else None, ctypes.byref(handle), msg
        )
        if st:
            raise LoomError(st, msg.value.decode())
        self._h = handle
        self._models = []
        cfg = _capi.lib.loom_device_config(self._h).contents
        self.backend = _capi.lib.loom_device_backend(self._h).decode()
        self.config = cfg.name.decode()
        self.config_hash = cfg.hash

    def __repr__(self):
        return "loom.Device(%r, config=%r)" % (self.backend, self.config)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: ctypes may be gone
            pass

    def _check(self, st):
        if st:
            raise LoomError(st, _capi.lib.loom_device_error(self._h).decode())

    def load(self, path):
        """Loads a .loom file on this device; returns a Model."""
        if not self._h:
            raise ValueError("loom: the device is closed")
        msg = ctypes.create_string_buffer(_capi.MSG_MAX)
        handle = _capi.c_handle()
        st = _capi.lib.loom_model_load(self._h, str(path).encode(), ctypes.byref(handle), msg)
        if st:
            raise LoomError(st, msg.value.decode())
        model = Model(self, handle)
        self._models.append(model)
        return model

    def close(self):
        """Frees every model loaded here, then the device."""
        if getattr(self, "_h", None):
            for model in self._models:
                model.close()
            _capi.lib.loom_device_close(self._h)
            self._h = None


class Model:
    """A .loom model loaded on a Device (Device.load)."""

    def __init__(self, device, handle):
        self.device = device
        self._h = handle
        lib = _capi.lib
        self.inputs = [_tensor(lib.loom_model_input(handle, i).contents)
                       for i in range(lib.loom_model_input_count(handle))]
        self.outputs = [_tensor(lib.loom_model_output(handle, i).contents)
                        for i in range(lib.loom_model_output_count(handle))]

    def __repr__(self):
        return "loom.Model(inputs=%r, outputs=%r)" % (
            [t.name for t in self.inputs], [t.name for t in self.outputs])

    def _live(self):
        if not self._h:
            raise ValueError("loom: the model is closed")
        return self._h

    def _find(self, tensors, name, kind):
        for t in tensors:
            if t.name == name:
                return t
        raise KeyError("loom: no %s named %r (%ss: %s)"
                       % (kind, name, kind, ", ".join(t.name for t in tensors)))

    def set_input(self, name, array):
        """Sets input `name` from a NumPy array of its dtype and shape.  A
        float array for a float32 input is converted; an int8/uint8 array
        for a quantized input is taken as already quantized."""
        t = self._find(self.inputs, name, "input")
        a = np.asarray(array)
        if a.dtype != t.dtype and a.dtype.kind == "f" and t.dtype == np.float32:
            a = a.astype(np.float32)
        a = np.ascontiguousarray(a)
        dtype = _capi.DTYPES.get("bool" if a.dtype == np.bool_ else a.dtype.name)
        if dtype is None:
            raise TypeError("loom: input %r: NumPy dtype %s has no Loom type" % (name, a.dtype))
        dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        self.device._check(_capi.lib.loom_model_set_input(
            self._live(), name.encode(), dtype, a.ndim, dims, a.ctypes.data_as(ctypes.c_void_p)))

    def run(self, timeout_ms=0):
        """Runs every step of the model (accelerator jobs and host ops);
        timeout_ms 0 is the backend's default."""
        self.device._check(_capi.lib.loom_model_run(self._live(), timeout_ms))

    def output(self, name):
        """Output `name` of the last run, as a new NumPy array."""
        t = self._find(self.outputs, name, "output")
        out = np.empty(t.shape, t.dtype)
        self.device._check(_capi.lib.loom_model_get_output(
            self._live(), name.encode(), out.ctypes.data_as(ctypes.c_void_p), out.nbytes))
        return out

    def __call__(self, timeout_ms=0, **inputs):
        """Sets the inputs given by name, runs, returns {name: array} of
        every output."""
        for name, array in inputs.items():
            self.set_input(name, array)
        self.run(timeout_ms)
        return {t.name: self.output(t.name) for t in self.outputs}

    @property
    def job_count(self):
        """Accelerator jobs in the model."""
        return _capi.lib.loom_model_job_count(self._live())

    def job_counters(self, job):
        """{counter name: value} of job `job` in the last run (plus "error"
        and "error_insn", the ISA's error code and instruction)."""
        if not 0 <= job < self.job_count:
            raise IndexError("loom: job %d of %d" % (job, self.job_count))
        error, insn, values = _capi.read_job_result(
            _capi.lib.loom_model_job_result(self._live(), job))
        result = dict(zip(COUNTERS, values))
        result.update(error=error, error_insn=insn)
        return result

    def counters(self):
        """{counter name: value} summed over every job of the last run."""
        total = dict.fromkeys(COUNTERS, 0)
        for j in range(self.job_count):
            c = self.job_counters(j)
            for name in COUNTERS:
                total[name] += c[name]
        return total

    def close(self):
        """Frees the model (Device.close does it too)."""
        if self._h:
            _capi.lib.loom_model_free(self._h)
            self._h = None
