"""Hostile pickles for the benchmark loaders (chapter 54, issue 34). numpy believes the state a pickle gives a dtype,
flags included, so an object dtype saved with flags 0 turns bytes of the file into Python object pointers and kills
the process. Every global the loaders' unpickler admits (`PICKLE_GLOBALS`) is reached here with an object dtype,
changed dtype flags or sizes, a bad state or a buffer of the wrong size; each file must end in one
`BenchmarkFileError` naming it, from `load_pickle` and from `read_revisited_gnd`. Each runs in a child process, so a
crash (a signal) fails its test instead of ending the run. The pickles numpy and pickle write for plain arrays, and
the revisited-Oxford layout, must still load to the values they hold."""
import json
import os
import pickle
import pickletools
import signal
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retrieval_lit
from retrieval_lit.loaders import PICKLE_GLOBALS, BenchmarkFileError, load_pickle, read_revisited_gnd

# ---- a small assembler of pickle opcodes (protocol 2, plus BINBYTES), the instructions numpy's pickles are made of


def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def text(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def raw(b: bytes) -> bytes:
    return b"B" + struct.pack("<I", len(b)) + b


def num(i: int) -> bytes:
    if -2**31 <= i < 2**31:
        return b"J" + struct.pack("<i", i)
    body = i.to_bytes((i.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(body)]) + body                           # LONG1


NONE, TRUE, FALSE = b"N", b"\x88", b"\x89"


def tup(*items: bytes) -> bytes:
    return b"(" + b"".join(items) + b"t"


def call(fn: bytes, *args: bytes) -> bytes:
    return fn + tup(*args) + b"R"


def build(obj: bytes, state: bytes) -> bytes:
    return obj + state + b"b"


def listing(*items: bytes) -> bytes:
    return b"](" + b"".join(items) + b"e"


def mapping(**items: bytes) -> bytes:
    return b"}(" + b"".join(text(k) + v for k, v in items.items()) + b"u"


def whole(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


NDARRAY, DTYPE = glob("numpy", "ndarray"), glob("numpy", "dtype")
ENCODE = glob("_codecs", "encode")


def helper(name: str, core: str) -> bytes:
    "numpy's pickling helper under numpy 2's (`_core`) or numpy 1's (`core`) module name."
    return glob(f"numpy.{core}.{'numeric' if name == '_frombuffer' else 'multiarray'}", name)


def dstate(order="<", elsize=-1, alignment=-1, flags=0, version=3, extra=()) -> bytes:
    "A dtype's pickled state: numpy's own for a plain number type, or one with a part changed."
    return tup(num(version), text(order), NONE, NONE, NONE, num(elsize), num(alignment), num(flags), *extra)


def dtype(descr: str, state: bytes | None = None, align: bytes = FALSE) -> bytes:
    made = call(DTYPE, text(descr), align, TRUE)
    return made if state is None else build(made, state)


O8_FLAGS_0 = dtype("O8", dstate("|", flags=0))       # the issue's dtype: objects, flags saying none
O8_NUMPY = dtype("O8", dstate("|", flags=63))        # an object dtype as numpy writes it
I8 = dtype("i8", dstate("<"))
I8_OBJECTS = dtype("i8", dstate("<", flags=63))      # a plain type whose flags claim objects
POINTERS = raw(b"AAAAAAAA")                          # read as a PyObject pointer, 0x4141414141414141


def array(dt: bytes, shape: tuple, data: bytes, core="_core", fortran=FALSE, version=1) -> bytes:
    "An array as numpy pickles one: _reconstruct(ndarray, (0,), b'b'), then BUILD with its state."
    empty = call(helper("_reconstruct", core), NDARRAY, tup(num(0)), raw(b"b"))
    return build(empty, tup(num(version), tup(*map(num, shape)), dt, fortran, data))


def gnd_file(**entry: bytes) -> bytes:
    "A revisited-Oxford ground truth of three images and one query, with the query's entries given."
    plain = array(I8, (1,), raw(np.int64(0).tobytes()))
    entry = {"easy": plain, "hard": listing(), "junk": listing(), **entry}
    return whole(mapping(imlist=listing(text("a"), text("b"), text("c")), qimlist=listing(text("q")),
                         gnd=listing(mapping(**entry))))


ISSUE_96 = (b"\x80\x02cnumpy._core.multiarray\nscalar\n"
            b"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff"
            b"\xffK\x00tb"
            b"C\x08AAAAAAAA\x86R.")

DTYPE_REFUSED = "numpy.dtype is allowed only for plain numbers"
STATE_REFUSED = "the state of dtype 'i8' must be numpy's own"


def numpy_payloads(core: str) -> dict:
    "label -> (file, what the refusal must say): every numpy global, under one module spelling."
    R, S, F = helper("_reconstruct", core), helper("scalar", core), helper("_frombuffer", core)
    empty = call(R, NDARRAY, tup(num(0)), raw(b"b"))
    i8_bytes = raw(np.arange(2, dtype="<i8").tobytes())
    return {
        # scalar(dtype, bytes)
        "scalar: O8 with flags 0 on eight bytes": (whole(call(S, O8_FLAGS_0, POINTERS)), "got dtype('O8', False, True)"),
        "scalar: O8 as numpy writes it, on a str": (whole(call(S, O8_NUMPY, text("x"))), DTYPE_REFUSED),
        "scalar: i8 whose flags claim objects": (whole(call(S, I8_OBJECTS, POINTERS)), STATE_REFUSED),
        "scalar: i8 from 3 bytes": (whole(call(S, I8, raw(b"abc"))), "holds 8 bytes, the file gives 3"),
        "scalar: i8 from a list": (whole(call(S, I8, listing(num(1)))), "must be bytes, got list"),
        "scalar: a str for a dtype": (whole(call(S, text("O"), POINTERS)), "an array's dtype must be one numpy.dtype"),
        "scalar: no bytes": (whole(call(S, I8)), "scalar is allowed only as scalar(dtype, bytes)"),
        # _reconstruct(ndarray, (0,), b'b') and its state
        "_reconstruct: O8 with flags 0, pointers": (whole(array(O8_FLAGS_0, (1,), POINTERS, core)), DTYPE_REFUSED),
        "_reconstruct: O8 as numpy writes it, objects": (whole(array(O8_NUMPY, (1,), listing(text("x")), core)),
                                                         DTYPE_REFUSED),
        "_reconstruct: i8 whose flags claim objects": (whole(array(I8_OBJECTS, (1,), POINTERS, core)), STATE_REFUSED),
        "_reconstruct: i8 of item size 1000": (whole(array(dtype("i8", dstate(elsize=1000)), (2,), i8_bytes, core)),
                                               STATE_REFUSED),
        "_reconstruct: i8 aligned to 3": (whole(array(dtype("i8", dstate(alignment=3)), (2,), i8_bytes, core)),
                                          STATE_REFUSED),
        "_reconstruct: i8 with metadata": (whole(array(dtype("i8", dstate(version=4, extra=(mapping(),))), (2,),
                                                       i8_bytes, core)), STATE_REFUSED),
        "_reconstruct: i8 saying '|'": (whole(array(dtype("i8", dstate("|")), (2,), i8_bytes, core)), STATE_REFUSED),
        "_reconstruct: buffer too short": (whole(array(I8, (1000,), POINTERS, core)), "holds 8000 bytes, the file gives 8"),
        "_reconstruct: buffer too long": (whole(array(I8, (1,), raw(b"A" * 16), core)), "holds 8 bytes, the file gives 16"),
        "_reconstruct: shape past 2**64 bytes": (whole(array(I8, (2**62, 2**62), raw(b""), core)), "the file gives 0"),
        "_reconstruct: negative shape": (whole(array(I8, (-1,), raw(b""), core)), "an array's shape must be a tuple"),
        "_reconstruct: state version 2": (whole(array(I8, (2,), i8_bytes, core, version=2)), "an array's state must be"),
        "_reconstruct: state without a version": (whole(build(empty, tup(tup(num(2)), I8, FALSE, i8_bytes))),
                                                  "an array's state must be"),
        "_reconstruct: is_fortran a str": (whole(array(I8, (2,), i8_bytes, core, fortran=text("F"))),
                                           "an array's state must be"),
        "_reconstruct: its own dtype argument": (whole(call(R, NDARRAY, tup(num(0)), dtype("i8"))),
                                                 "_reconstruct is allowed only as numpy calls it"),
        "_reconstruct: O8 with flags 0 as its argument": (whole(call(R, NDARRAY, tup(num(0)), O8_FLAGS_0)),
                                                          DTYPE_REFUSED),
        "_reconstruct: 2**40 items": (whole(call(R, NDARRAY, tup(num(2**40)), raw(b"b"))), "got shape (1099511627776,)"),
        "_reconstruct: the state set twice": (whole(build(array(I8, (2,), i8_bytes, core),
                                                          tup(num(1), tup(num(1)), O8_FLAGS_0, FALSE, POINTERS))),
                                              DTYPE_REFUSED),
        "_reconstruct: the state set twice, plainly": (whole(build(array(I8, (2,), i8_bytes, core),
                                                                   tup(num(1), tup(num(2)), I8, FALSE, i8_bytes))),
                                                       "already made"),
        "_reconstruct: no state": (whole(empty), "never sets its state"),
        "_reconstruct: a bool of byte 2": (whole(array(dtype("b1", dstate("|")), (1,), raw(b"\x02"), core)),
                                           "a bool array's bytes must be 0 or 1"),
        "_reconstruct: a record with an object field": (whole(array(dtype("V8", tup(
            num(3), text("|"), NONE, tup(text("a")), mapping(a=tup(O8_FLAGS_0, num(0))), num(8), num(1), num(0))),
            (1,), POINTERS, core)), DTYPE_REFUSED),
        "_reconstruct: a date with metadata": (whole(array(dtype("M8", dstate(version=4, extra=(mapping(),))),
                                                           (1,), POINTERS, core)), DTYPE_REFUSED),
        "_reconstruct: longdouble": (whole(array(dtype("f16", dstate()), (1,), raw(b"A" * 16), core)), DTYPE_REFUSED),
        "_reconstruct: a str array": (whole(array(dtype("U2", dstate(elsize=8, alignment=4, flags=8)), (1,),
                                                  raw(b"A" * 8), core)), DTYPE_REFUSED),
        # _frombuffer(buffer, dtype, shape, order)
        "_frombuffer: O8 with flags 0": (whole(call(F, POINTERS, O8_FLAGS_0, tup(num(1)), text("C"))), DTYPE_REFUSED),
        "_frombuffer: i8 whose flags claim objects": (whole(call(F, POINTERS, I8_OBJECTS, tup(num(1)), text("C"))),
                                                      STATE_REFUSED),
        "_frombuffer: buffer too short": (whole(call(F, POINTERS, I8, tup(num(1000)), text("C"))),
                                          "holds 8000 bytes, the file gives 8"),
        "_frombuffer: order K": (whole(call(F, POINTERS, I8, tup(num(1)), text("K"))), "_frombuffer is allowed only"),
        "_frombuffer: a str for a dtype": (whole(call(F, POINTERS, text("O"), tup(num(1)), text("C"))),
                                           "an array's dtype must be one numpy.dtype"),
        "_frombuffer: a state on its array": (whole(build(call(F, POINTERS, I8, tup(num(1)), text("C")),
                                                          tup(num(1), tup(num(1)), O8_FLAGS_0, FALSE, POINTERS))),
                                              DTYPE_REFUSED),
        "_frombuffer: a state on its array, plainly": (whole(build(call(F, POINTERS, I8, tup(num(1)), text("C")),
                                                                   tup(num(1), tup(num(1)), I8, FALSE, POINTERS))),
                                                       "already made"),
    }


OTHER_PAYLOADS = {
    "the issue's 96 bytes": (ISSUE_96, "got dtype('O8', False, True)"),
    # numpy.dtype on its own
    "dtype: O8 with flags 0, alone": (whole(O8_FLAGS_0), DTYPE_REFUSED),
    "dtype: i8 whose flags claim objects, alone": (whole(I8_OBJECTS), STATE_REFUSED),
    "dtype: aligned": (whole(dtype("i8", align=TRUE)), "got dtype('i8', True, True)"),
    "dtype: a state that is a dict": (whole(dtype("i8", mapping(flags=num(63)))), STATE_REFUSED),
    "dtype: as a class (NEWOBJ)": (whole(DTYPE + tup(text("O8")) + b"\x81"), "is not a readable pickle"),
    "dtype: descr spelled <i8": (whole(dtype("<i8")), DTYPE_REFUSED),
    # numpy.ndarray
    "ndarray: called for 2**40 items": (whole(call(NDARRAY, tup(num(2**40)))), "is not a readable pickle (TypeError"),
    "ndarray: a state set on it": (whole(build(NDARRAY, tup(num(1), tup(num(1)), I8, FALSE, POINTERS))),
                                   "sets the state of numpy.ndarray itself"),
    # _codecs.encode, bytes: the other globals, as an array's contents
    "_codecs.encode: to base64": (whole(call(ENCODE, text("abc"), text("base64"))), "allowed only as str -> latin1"),
    "_codecs.encode: of bytes": (whole(call(ENCODE, raw(b"abc"), text("latin1"))), "allowed only as str -> latin1"),
    "_codecs.encode: contents of the wrong size": (whole(array(I8, (1000,), call(ENCODE, text("AAAAAAAA"),
                                                                                  text("latin1")))),
                                                   "holds 8000 bytes, the file gives 8"),
    "builtins.bytes: 2**30 bytes": (whole(call(glob("builtins", "bytes"), num(2**30))), "bytes is allowed only without"),
    "__builtin__.bytes: 2**30 bytes": (whole(call(glob("__builtin__", "bytes"), num(2**30))),
                                       "bytes is allowed only without"),
    "builtins.bytes: contents of a non-empty array": (whole(array(I8, (1,), call(glob("builtins", "bytes")))),
                                                      "holds 8 bytes, the file gives 0"),
    # a ground truth's layout with the hostile value inside it (read_revisited_gnd's own path)
    "gnd: easy an O8 array with flags 0": (gnd_file(easy=array(O8_FLAGS_0, (1,), POINTERS)), DTYPE_REFUSED),
    "gnd: junk an O8 number with flags 0": (gnd_file(junk=call(helper("scalar", "_core"), O8_FLAGS_0, POINTERS)),
                                            DTYPE_REFUSED),
    "gnd: hard an i8 array claiming objects": (gnd_file(hard=array(I8_OBJECTS, (1,), POINTERS)), STATE_REFUSED),
    "gnd: bbx through _frombuffer, O8": (gnd_file(bbx=call(helper("_frombuffer", "_core"), POINTERS, O8_FLAGS_0,
                                                           tup(num(1)), text("C"))), DTYPE_REFUSED),
}


# issue 46: a BUILD on a global itself, and a global (or a dtype) left in the data, which is not data
GLOBALS_BUILT = {"numpy.dtype": DTYPE, "_codecs.encode": ENCODE, "builtins.bytes": glob("builtins", "bytes"),
                 "numpy._reconstruct": helper("_reconstruct", "_core"), "numpy.scalar": helper("scalar", "core"),
                 "numpy._frombuffer": helper("_frombuffer", "_core")}
for _name, _g in GLOBALS_BUILT.items():
    OTHER_PAYLOADS[f"46: BUILD on {_name} with a dict"] = (whole(build(_g, mapping(a=num(1)))),
                                                           f"sets the state of {_name} itself")
    OTHER_PAYLOADS[f"46: BUILD on {_name} with (dict, slots)"] = (
        whole(build(_g, tup(mapping(), mapping(fn=text("x"))))), f"sets the state of {_name} itself")
    OTHER_PAYLOADS[f"46: {_name} alone"] = (whole(_g), f"holds {_name} (the global itself")
    OTHER_PAYLOADS[f"46: {_name} in a list"] = (whole(listing(num(1), _g)), f"holds {_name} (the global itself")
    OTHER_PAYLOADS[f"46: {_name} as a dict key"] = (whole(b"}(" + _g + num(1) + b"u"),
                                                    f"holds {_name} (the global itself")
OTHER_PAYLOADS.update({
    "46: the issue's file, gnd bbx a numpy.dtype built with a dict": (
        gnd_file(bbx=build(DTYPE, mapping(a=num(1)))), "sets the state of numpy.dtype itself"),
    "46: gnd easy is numpy.dtype": (gnd_file(easy=DTYPE), "holds numpy.dtype (the global itself"),
    "46: gnd easy is numpy.ndarray": (gnd_file(easy=NDARRAY), "holds numpy.ndarray (the global itself, not an array)"),
    "46: a dtype alone": (whole(I8), "(a numpy dtype on its own, outside an array)"),
    "46: a dtype in a tuple": (whole(tup(num(1), I8)), "(a numpy dtype on its own, outside an array)"),
    "46: ndarray alone": (whole(NDARRAY), "holds numpy.ndarray (the global itself, not an array)"),
})


def legit_gnd() -> dict:
    return {"imlist": ["a", "b", "c", "d"], "qimlist": ["q0", "q1"],
            "gnd": [{"bbx": [1.0, 2.0, 30.5, 40.0], "easy": np.array([0, 3]), "hard": np.array([1]),
                     "junk": np.array([], dtype=np.int64)},
                    {"bbx": [0.0, 0.0, 5.0, 5.0], "easy": np.array([2]), "hard": np.array([], dtype=np.int64),
                     "junk": np.array([0, 1])}]}


def edited_gnd(protocol: int) -> bytes:
    "A legitimate ground truth with its dtype descriptions changed from i8 to O8: one byte each, nothing else."
    blob = pickle.dumps(legit_gnd(), protocol=protocol)
    edited = blob.replace(b"X\x02\x00\x00\x00i8", b"X\x02\x00\x00\x00O8").replace(b"\x8c\x02i8", b"\x8c\x02O8")
    assert edited != blob and len(edited) == len(blob)
    return edited


for _p in range(2, pickle.HIGHEST_PROTOCOL + 1):
    OTHER_PAYLOADS[f"gnd: i8 edited to O8, protocol {_p}"] = (edited_gnd(_p), DTYPE_REFUSED)

PAYLOADS = {**{f"{label} ({core})": v for core in ("_core", "core") for label, v in numpy_payloads(core).items()},
            **OTHER_PAYLOADS}

RUNNER = r"""
import json, sys
from retrieval_lit.loaders import BenchmarkFileError, load_pickle, read_revisited_gnd
for path in sys.argv[1:]:
    print(json.dumps({"start": path}), flush=True)
    out = {"path": path}
    for reader in (load_pickle, read_revisited_gnd):
        try:
            value = reader(path)
            out[reader.__name__] = ["value", repr(value)[:300]]  # repr: the first use, which crashes a bad array
        except BenchmarkFileError as e:
            out[reader.__name__] = ["BenchmarkFileError", str(e)]
        except BaseException as e:
            out[reader.__name__] = [type(e).__name__, str(e)[:500]]
    print(json.dumps(out), flush=True)
"""

PLAIN_CHILD = r"""
import pickle, sys
print(repr(pickle.load(open(sys.argv[1], "rb")))[:100])
"""


def _no_core_dump():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_child(code: str, *paths) -> subprocess.CompletedProcess:
    "python -c code paths..., in a fresh process that imports this retrieval_lit (a crash ends the child only)."
    root = str(Path(retrieval_lit.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    return subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True,
                          timeout=300, env=env, preexec_fn=_no_core_dump if os.name == "posix" else None)


def died(proc: subprocess.CompletedProcess) -> str:
    if proc.returncode < 0:
        return f"the child died of {signal.Signals(-proc.returncode).name}; stderr: {proc.stderr[-800:]}"
    return f"the child exited {proc.returncode}; stderr: {proc.stderr[-800:]}"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """label -> what both readers did with the payload, read in child processes: one child reads the files in turn,
    announcing each before it starts; a child that dies marks the file it was reading, and a new one goes on."""
    folder = tmp_path_factory.mktemp("hostile")
    label_of = {}
    for i, (label, (blob, _)) in enumerate(PAYLOADS.items()):
        path = folder / f"gnd_{i:03d}.pkl"
        path.write_bytes(blob)
        label_of[str(path)] = label
    results, todo = {}, list(label_of)
    while todo:
        proc = run_child(RUNNER, *todo)
        reading = None
        for line in proc.stdout.splitlines():
            record = json.loads(line)
            if "start" in record:
                reading = record["start"]
            else:
                results[label_of[record["path"]]], reading = record, None
        if proc.returncode == 0 and reading is None:
            break
        if reading is None:                                              # it failed before or between files
            for path in todo:
                results.setdefault(label_of[path], {"path": path, "died": died(proc)})
            break
        results[label_of[reading]] = {"path": reading, "died": died(proc)}
        todo = todo[todo.index(reading) + 1:]
    return results


def test_every_admitted_global_is_reached():
    "The payloads name every global the unpickler admits, under both numpy module spellings."
    named = {tuple(arg.split(" ", 1)) for blob, _ in PAYLOADS.values()
             for op, arg, _ in pickletools.genops(blob) if op.name == "GLOBAL"}
    assert set(PICKLE_GLOBALS) <= named, set(PICKLE_GLOBALS) - named


@pytest.mark.parametrize("label", list(PAYLOADS))
def test_a_hostile_pickle_is_refused_in_a_child_process(outcomes, label):
    record = outcomes[label]
    assert "died" not in record, f"{label}: {record.get('died')}"
    path, says = record["path"], PAYLOADS[label][1]
    for reader in ("load_pickle", "read_revisited_gnd"):
        kind, message = record[reader]
        assert kind == "BenchmarkFileError", f"{label}: {reader} gave {kind}: {message}"
        assert message.startswith(f"{path}: "), message
    assert says in record["load_pickle"][1], record["load_pickle"][1]
    assert record["read_revisited_gnd"][1] == record["load_pickle"][1]


def test_a_crash_in_the_child_fails_only_its_file(tmp_path):
    "The runner itself: a file that kills the child is marked, and the files after it are still read."
    folder = tmp_path
    paths = [folder / "a.pkl", folder / "b.pkl"]
    paths[0].write_bytes(pickle.dumps([1]))
    paths[1].write_bytes(pickle.dumps([2]))
    proc = run_child(RUNNER.replace("for path in sys.argv[1:]:", "import os, signal\nfor path in sys.argv[1:]:\n"
                                    "    if path.endswith('a.pkl'): print(json.dumps({'start': path}), flush=True); "
                                    "os.kill(os.getpid(), signal.SIGSEGV)"), *paths)
    assert proc.returncode == -signal.SIGSEGV and json.loads(proc.stdout.splitlines()[-1]) == {"start": str(paths[0])}


def test_the_issue_file_is_refused_in_process_too(tmp_path):
    "The safe path refuses the 96 bytes before numpy sees them, so it may run here, in the test's own process."
    assert len(ISSUE_96) == 96
    path = tmp_path / "crash.pkl"
    path.write_bytes(ISSUE_96)
    for reader in (load_pickle, read_revisited_gnd):
        with pytest.raises(BenchmarkFileError) as err:
            reader(path)
        assert str(err.value).startswith(f"{path}: describes a numpy value this reader refuses: numpy.dtype is "
                                         "allowed only for plain numbers")
        assert "got dtype('O8', False, True)" in str(err.value)


@pytest.mark.parametrize("label", ["the issue's 96 bytes", "_reconstruct: O8 with flags 0, pointers (_core)",
                                   "_frombuffer: O8 with flags 0 (_core)", "gnd: i8 edited to O8, protocol 5"])
def test_the_payloads_are_real(tmp_path, label):
    "pickle.load on these files, as numpy answers them, kills the child: the tests above test something."
    path = tmp_path / "x.pkl"
    path.write_bytes(PAYLOADS[label][0])
    proc = run_child(PLAIN_CHILD, path)
    if proc.returncode >= 0:
        pytest.skip(f"numpy {np.__version__} no longer crashes on {label!r} ({died(proc)})")
    assert -proc.returncode in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL), died(proc)


# ---- what numpy and pickle write for plain data still reads back, value for value

PLAIN = ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]


@st.composite
def plain_arrays(draw):
    descr = draw(st.sampled_from(PLAIN))
    order = "|" if np.dtype(descr).itemsize == 1 else draw(st.sampled_from("<>"))
    dt = np.dtype(descr if order == "|" else order + descr)
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    raw_bytes = draw(st.binary(min_size=int(np.prod(shape)) * dt.itemsize, max_size=int(np.prod(shape)) * dt.itemsize))
    a = np.frombuffer(raw_bytes, dtype=np.uint8).copy()
    if dt.kind == "b":
        a &= 1
    a = a.view(dt).reshape(shape)
    return np.asfortranarray(a) if draw(st.booleans()) else a


def same(ours, theirs) -> bool:
    "The same type, dtype (byte order included), shape and bytes."
    if isinstance(theirs, (np.ndarray, np.generic)):
        return (type(ours) is type(theirs) and ours.dtype == theirs.dtype and ours.dtype.str == theirs.dtype.str
                and np.shape(ours) == np.shape(theirs) and np.asarray(ours).tobytes("A") == np.asarray(theirs).tobytes("A"))
    if isinstance(theirs, (list, tuple)):
        return type(ours) is type(theirs) and len(ours) == len(theirs) and all(map(same, ours, theirs))
    if isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k]) for k in theirs)
    return type(ours) is type(theirs) and ours == theirs


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(arrays=st.lists(plain_arrays(), min_size=1, max_size=4), protocol=st.integers(0, pickle.HIGHEST_PROTOCOL),
       numpy_1_names=st.booleans())
def test_plain_arrays_read_back_as_numpy_reads_them(tmp_path_factory, arrays, protocol, numpy_1_names):
    "load_pickle gives what pickle.loads gives (numpy's own reading, safe on files written here), bit for bit."
    data = {"arrays": arrays, "scalars": [a.reshape(-1)[0] for a in arrays if a.size], "shared": [arrays[0]] * 2,
            "plain": [1, 2.5, "x", None, True, b"y", (3, "z")]}
    blob = written = pickle.dumps(data, protocol=protocol)
    if numpy_1_names and protocol <= 3:                                  # as numpy 1 named its helpers
        written = blob.replace(b"cnumpy._core.", b"cnumpy.core.")
        assert written != blob
    path = tmp_path_factory.mktemp("plain") / "data.pkl"
    path.write_bytes(written)
    ours, theirs = load_pickle(path), pickle.loads(blob)
    assert same(ours, theirs)
    for a, b in zip(ours["arrays"], theirs["arrays"]):
        assert a.flags.f_contiguous == b.flags.f_contiguous and a.flags.writeable and a.flags.c_contiguous == \
            b.flags.c_contiguous


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint16, np.float64, "column"])
def test_the_revisited_layout_reads_as_written(tmp_path, protocol, index_dtype):
    "The revisited-Oxford layout (lists of names, one dict per query of index arrays and a box) reads to its values."
    gt = legit_gnd()
    for e in gt["gnd"]:
        for k in ("easy", "hard", "junk"):
            e[k] = e[k].reshape(-1, 1) if index_dtype == "column" else e[k].astype(index_dtype)
    path = tmp_path / "gnd_roxford5k.pkl"
    path.write_bytes(pickle.dumps(gt, protocol=protocol))
    data = read_revisited_gnd(path)
    assert data["imlist"] == gt["imlist"] and data["qimlist"] == gt["qimlist"]
    for ours, theirs in zip(data["gnd"], legit_gnd()["gnd"]):
        for k in ("easy", "hard", "junk"):
            assert ours[k].dtype == np.int64 and ours[k].tolist() == theirs[k].tolist()
        assert ours["bbx"].tolist() == theirs["bbx"]
    assert same(load_pickle(path), pickle.loads(path.read_bytes()))


def test_bool_and_scalar_values(tmp_path):
    path = tmp_path / "x.pkl"
    values = {"yes": np.array([True, False, True]), "one": np.bool_(True), "half": np.float16(0.5),
              "z": np.complex64(1 - 2j), "big": np.array([1, 2], dtype=">u4"), "zero_d": np.array(7, dtype=np.int8),
              "empty": np.zeros((0, 3), dtype=np.float32)}
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        path.write_bytes(pickle.dumps(values, protocol=protocol))
        ours = load_pickle(path)
        assert same(ours, pickle.loads(path.read_bytes())), protocol     # numpy's reading: '>u4' comes back native
        for k, v in values.items():                                        # (protocol 5 keeps it) and values stay
            assert type(ours[k]) is type(v) and np.array_equal(ours[k], v) and np.shape(ours[k]) == np.shape(v), k


# ---- data no ground truth can be


def test_cycles_depth_and_shared_lists(tmp_path):
    path = tmp_path / "x.pkl"
    loop = [1]
    loop.append(loop)
    path.write_bytes(pickle.dumps({"gnd": loop}, protocol=4))
    with pytest.raises(BenchmarkFileError, match=r"x\.pkl: holds a list inside itself"):
        load_pickle(path)
    deep = [0]
    for _ in range(40):
        deep = [deep]
    path.write_bytes(pickle.dumps(deep, protocol=2))
    with pytest.raises(BenchmarkFileError, match="nests lists, tuples or dicts more than 32 deep"):
        read_revisited_gnd(path)
    laughs = [np.arange(3)]
    for _ in range(30):                                                  # 2**30 paths through 31 lists
        laughs = [laughs, laughs]
    path.write_bytes(pickle.dumps(laughs, protocol=5))
    out = load_pickle(path)
    for _ in range(30):
        assert out[0] is out[1]
        out = out[0]
    assert np.array_equal(out[0], np.arange(3))
    path.write_bytes(pickle.dumps({np.dtype("i8"): 1}, protocol=2))
    with pytest.raises(BenchmarkFileError, match="uses a numpy array or dtype as a dict key"):
        load_pickle(path)


DATA_TYPES = (dict, list, tuple, set, frozenset, str, bytes, bytearray, int, float, bool, type(None), np.ndarray,
              np.generic)


def data_only(x) -> bool:
    "Whether x is data: dicts, lists, tuples, sets, strings, bytes, numbers, numpy arrays and numbers, at every depth."
    if isinstance(x, dict):
        return all(data_only(k) and data_only(v) for k, v in x.items())
    if isinstance(x, (list, tuple, set, frozenset)):
        return all(data_only(v) for v in x)
    return type(x) in DATA_TYPES or isinstance(x, (np.ndarray, np.generic))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.sampled_from([DTYPE, NDARRAY, ENCODE, glob("builtins", "bytes"), I8, num(1), text("a"),
                                       NONE, mapping(), listing(), tup(), b"b", b"R", b"0", b"t", b"(", b"]",
                                       b"}", b"s", b"e", b"u", b"a", b"\x85", b"\x86", b"\x81", b"2"]),
                      min_size=1, max_size=8))
def test_whatever_loads_is_data_only(tmp_path_factory, parts):
    "Random instruction sequences over the admitted globals: a BenchmarkFileError, or data only (issue 46)."
    path = tmp_path_factory.mktemp("mixed") / "x.pkl"
    path.write_bytes(whole(b"".join(parts)))
    try:
        value = load_pickle(path)
    except BenchmarkFileError as e:
        assert str(e).startswith(f"{path}: ")
        return
    assert data_only(value), repr(value)[:200]
