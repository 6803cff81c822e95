# The jail's Python fast path: an interpreter started ahead of time inside a
# pooled sandbox, already unprivileged, filtered and limited like any
# program there. It waits for one job from the sandbox's init on fd 3 (the
# standard streams, argv and environment of the execution), then runs
# main.py exactly as `python3 -u main.py ARGS` would: same __main__ module,
# __file__, sys.argv, sys.path[0], tracebacks, exit codes and shutdown.
# It serves one job and exits; the sandbox is never reused.
import sys
import os
import socket

# What short scripts commonly import, loaded while nobody waits. A module
# the image lacks is skipped: the script then fails on it as it would cold.
for _name in ("json", "re", "math", "cmath", "collections", "collections.abc", "itertools",
              "functools", "operator", "datetime", "time", "random", "string", "textwrap",
              "statistics", "decimal", "fractions", "typing", "dataclasses", "enum",
              "hashlib", "base64", "binascii", "struct", "csv", "io", "heapq", "bisect",
              "copy", "pprint", "traceback", "warnings", "pathlib", "shutil", "glob",
              "threading", "subprocess", "tempfile", "uuid", "unicodedata", "contextlib",
              "argparse", "types", "importlib.machinery", "linecache", "tokenize"):
    try:
        __import__(_name)
    except Exception:
        pass
del _name


def _serve():
    import types
    import builtins
    import importlib.machinery

    ctl = socket.socket(fileno=3)
    ctl.send(b"R")
    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 3)
    ctl.close()
    if len(fds) != 3:
        os._exit(126)
    # The streams of this execution replace the idle ones (/dev/null).
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)

    parts = msg.split(b"\0")
    argc = int(parts[0])
    argv = [os.fsdecode(a) for a in parts[1:1 + argc]]
    env = parts[1 + argc:-1]
    os.environ.clear()
    for entry in env:
        name, _, value = entry.partition(b"=")
        os.environb[name] = value
    time = sys.modules.get("time")
    if time is not None and hasattr(time, "tzset"):
        time.tzset()  # TZ may differ from the idle interpreter's

    # argv is the cold command line: python3 -u main.py ARGS...
    sys.orig_argv = argv
    sys.argv = argv[2:]
    path = os.path.abspath(sys.argv[0])
    sys.path[0] = os.path.dirname(path)

    main = types.ModuleType("__main__")
    main.__dict__.update({
        "__loader__": importlib.machinery.SourceFileLoader("__main__", path),
        "__spec__": None,
        "__annotations__": {},
        "__builtins__": builtins,
        "__file__": path,
        "__cached__": None,
    })
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as f:
            source = f.read()
        exec(compile(source, path, "exec"), main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        # Report it as the interpreter would, without this function's frame.
        tb = e.__traceback__
        if tb is not None and tb.tb_frame.f_code is _serve.__code__:
            tb = tb.tb_next
        e.__traceback__ = tb
        sys.excepthook(type(e), e, tb)
        if isinstance(e, KeyboardInterrupt):
            return "sigint"
        return 1
    return 0


_status = _serve()
if _status == "sigint":
    # An uncaught KeyboardInterrupt ends python by SIGINT, after shutdown.
    import signal
    import threading
    threading._shutdown()
    import atexit
    atexit._run_exitfuncs()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
sys.exit(_status)
