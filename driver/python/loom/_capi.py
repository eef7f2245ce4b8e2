"""The C API of libloom (include/loom/loom.h) through ctypes.

Finding the library, in this order:

  1. the environment variable LOOM_LIBRARY (a path; the tests point it at
     build/libloom.so);
  2. the path `make install` wrote into loom/_install.py;
  3. the system's search (ldconfig, LD_LIBRARY_PATH): libloom.so.

Only the few layouts a binding must know are repeated here: struct
loom_tensor_info (its fields are fixed by the soname), the first two fields
of struct loom_hw_config (include/loom/hwconfig_rules.h) and LOOM_MSG_MAX.
The size of the counter table, the counter names and the data-type names
are asked from the library itself, so a new counter or dtype in
hw/spec/ needs no change here.
"""

import ctypes
import ctypes.util
import os

MSG_MAX = 512  # LOOM_MSG_MAX
MAX_RANK = 6  # LOOM_MAX_RANK
HW_NAME_MAX = 32  # LOOM_HW_NAME_MAX

c_status = ctypes.c_int  # loom_status
c_handle = ctypes.c_void_p  # loom_device *, loom_model *


class TensorInfo(ctypes.Structure):
    """struct loom_tensor_info"""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("dims", ctypes.c_int64 * MAX_RANK),
        ("scale", ctypes.c_float),
        ("zero_point", ctypes.c_int32),
    ]


class HwConfig(ctypes.Structure):
    """The first two fields of struct loom_hw_config (hwconfig_rules.h): the
    name is stored in the struct (a configuration file's name has no static
    string to point at)."""

    _fields_ = [("name", ctypes.c_char * HW_NAME_MAX), ("hash", ctypes.c_uint32)]


# name: (restype, argtypes)
_FUNCTIONS = {
    "loom_version": (ctypes.c_char_p, []),
    "loom_status_name": (ctypes.c_char_p, [c_status]),
    "loom_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "loom_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "loom_counter_count": (ctypes.c_uint32, []),
    "loom_counter_name": (ctypes.c_char_p, [ctypes.c_uint32]),
    "loom_backend_names": (ctypes.POINTER(ctypes.c_char_p), []),
    "loom_device_open": (
        c_status,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(c_handle), ctypes.c_char_p],
    ),
    "loom_device_close": (None, [c_handle]),
    "loom_device_error": (ctypes.c_char_p, [c_handle]),
    "loom_device_backend": (ctypes.c_char_p, [c_handle]),
    "loom_device_config": (ctypes.POINTER(HwConfig), [c_handle]),
    "loom_model_load": (
        c_status,
        [c_handle, ctypes.c_char_p, ctypes.POINTER(c_handle), ctypes.c_char_p],
    ),
    "loom_model_free": (None, [c_handle]),
    "loom_model_input_count": (ctypes.c_int, [c_handle]),
    "loom_model_output_count": (ctypes.c_int, [c_handle]),
    "loom_model_input": (ctypes.POINTER(TensorInfo), [c_handle, ctypes.c_int]),
    "loom_model_output": (ctypes.POINTER(TensorInfo), [c_handle, ctypes.c_int]),
    "loom_model_set_input": (
        c_status,
        [
            c_handle,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_void_p,
        ],
    ),
    "loom_model_run": (c_status, [c_handle, ctypes.c_uint32]),
    "loom_model_get_output": (
        c_status,
        [c_handle, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t],
    ),
    "loom_model_job_count": (ctypes.c_int, [c_handle]),
    "loom_model_job_result": (ctypes.c_void_p, [c_handle, ctypes.c_int]),
}


def _library_path():
    path = os.environ.get("LOOM_LIBRARY")
    if path:
        return path
    try:
        from . import _install

        return _install.LIBRARY
    except ImportError:
        pass
    return ctypes.util.find_library("loom") or "libloom.so"


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            "loom: cannot load libloom (%s): %s; set LOOM_LIBRARY to its path "
            "or install Loom with `make install`" % (path, e)
        )
    for name, (restype, argtypes) in _FUNCTIONS.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    return lib, path


lib, library_path = _load()

COUNTER_NAMES = tuple(
    lib.loom_counter_name(i).decode() for i in range(lib.loom_counter_count())
)


def _dtypes():
    """{name: enum value} of the library's data types ("int8", "float32"...)."""
    names = {}
    for i in range(256):
        name = lib.loom_dtype_name(i).decode()
        if name == "?":
            break
        names[name] = i
    return names


DTYPES = _dtypes()


def read_job_result(ptr):
    """(error, error_insn, counters) of a struct loom_job_result *."""
    n = len(COUNTER_NAMES)
    head = (ctypes.c_uint32 * 2).from_address(ptr)
    counters = (ctypes.c_uint64 * n).from_address(ptr + 8)
    return head[0], head[1], tuple(counters)
