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
import atexit as _atexit

# What short scripts most often import, loaded while nobody waits. The
# list is short on purpose: every module loaded here makes the interpreter's
# exit slower for every execution. A module the image lacks is skipped.
for _name in ("json", "re", "math", "collections", "itertools", "functools", "datetime",
              "random", "string", "time", "typing"):
    try:
        __import__(_name)
    except Exception:
        pass
del _name
# The compiler's first use costs most of a millisecond: paid here.
compile("import os\ndef f(x):\n    return [i * 2 for i in range(x)]\nclass C:\n    pass\n"
        "try:\n    y = f'{1}'\nexcept Exception as e:\n    pass\n", "<warm-up>", "exec")

# Our socket to the sandbox's init moves out of the way of the program's
# own files (a cold python opens its first file as fd 3).
_CTL_FD = _fd = 3
for _fd in (1023, 255):
    try:
        os.dup2(3, _fd, inheritable=False)
        os.close(3)
        _CTL_FD = _fd
        break
    except OSError:
        pass
del _fd
_PID = os.getpid()


def _exit_status(e):
    """What the interpreter makes of an uncaught SystemExit."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        # C's (int)(long) of the value, then the kernel's 8 bits.
        return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 255
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _reopen_stdio():
    """New sys.stdin/stdout/stderr over the execution's pipes, made as the
    interpreter makes them at start-up: the idle ones were made over
    /dev/null and remember what they learnt of it (seekable, for one)."""
    import io
    made = []
    for fd, old, mode, name in ((0, sys.__stdin__, "rb", "<stdin>"),
                                (1, sys.__stdout__, "wb", "<stdout>"),
                                (2, sys.__stderr__, "wb", "<stderr>")):
        # -u: the output streams are unbuffered, stdin is buffered.
        buffering = 0 if mode == "wb" and old.write_through else -1
        buf = io.open(fd, mode, buffering=buffering, closefd=False)
        raw = buf if buffering == 0 else buf.raw
        raw.name = name
        text = io.TextIOWrapper(buf, encoding=old.encoding, errors=old.errors, newline="\n",
                                line_buffering=old.line_buffering,
                                write_through=old.write_through)
        text.mode = mode[0]
        made.append(text)
    sys.stdin = sys.__stdin__ = made[0]
    sys.stdout = sys.__stdout__ = made[1]
    sys.stderr = sys.__stderr__ = made[2]


def _serve():
    import types
    import builtins
    import importlib.machinery

    ctl = socket.socket(fileno=_CTL_FD)
    ctl.send(b"R")
    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 3)
    ctl.detach()  # the fd stays open for _finish
    if len(fds) != 3:
        os._exit(126)
    # The streams of this execution replace the idle ones (/dev/null).
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    _reopen_stdio()

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
    except SystemExit as e:
        return _exit_status(e)
    except BaseException as e:
        # Report it as the interpreter would, without this function's frame.
        tb = e.__traceback__
        if tb is not None and tb.tb_frame.f_code is _serve.__code__:
            tb = tb.tb_next
        e.__traceback__ = tb
        sys.excepthook(type(e), e, tb)
        return "sigint" if isinstance(e, KeyboardInterrupt) else 1
    return 0


def _finish(status):
    """The interpreter's shutdown, as far as a program can tell: wait for
    its threads, run atexit callbacks, drop __main__'s globals (their
    __del__ methods run), flush the standard streams. Tearing down every
    preloaded module would only cost time: the sandbox is destroyed next.
    Then the init hears the exit status from us and ends the sandbox at
    once, without waiting for the kernel to free this process's memory."""
    # Threads exist only if the program imported threading (as the
    # interpreter's own shutdown reasons).
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    _atexit._run_exitfuncs()
    main = sys.modules.get("__main__")
    if main is not None:
        main.__dict__.clear()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            if status == 0:
                status = 120  # what python exits with when the final flush fails
    if status == "sigint":
        # An uncaught KeyboardInterrupt ends python by SIGINT.
        import signal
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 130
    if os.getpid() == _PID:  # not in a child the program forked
        try:
            for fd in (0, 1, 2):
                os.close(fd)
            ctl = socket.socket(fileno=_CTL_FD)
            ctl.send(b"D%d" % status)
            ctl.recv(1)  # the init kills us now
        except OSError:
            pass
    os._exit(status)


# Everything loaded so far lives as long as the interpreter: the collector
# need not scan it again while the program runs.
import gc
gc.freeze()
_finish(_serve())
