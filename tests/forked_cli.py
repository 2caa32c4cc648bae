"""``python -m structperc ARGS`` as a real process, forked from a server that has already imported what
``python -m structperc`` imports before it runs a command (``structperc.cli.main``): a command costs two
forks instead of a new interpreter and half a second of imports, which is most of what a usage error,
``--help`` or a small ``tag`` costs.

Each command is a process of its own, as with ``subprocess.run``: its own working directory,
environment, arguments, exit status and interpreter exit, ``structperc`` run as the ``__main__`` module
as ``-m`` runs it, and the standard streams it is handed: the caller's own file descriptors, passed over a
Unix socket, so that a pipe is a pipe and a file a file. What it shares with the other commands of the
server is what a fork keeps: the modules imported before the fork, so the settings read as a process
starts or imports numba and dask (``READ_AT_START``: a command given other values is refused; start a
process of its own), and the hash seed (a test that compares processes' outputs for determinism starts
its own processes).

``run`` is ``subprocess.run`` for a test; ``launcher`` writes a ``structperc`` executable for a shell
(the docs' examples) and ``executable`` is one, which hands its arguments, environment, working directory
and standard streams to the server and exits as the command exits (by the same signal, if a signal ended
it). One server per test process (pytest-xdist's workers have one each), started on first use, ended
with the test process."""
import json
import locale
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the settings that a forked process has as the server read them (the interpreter's, the locale's, numba's and
# dask's, read at start-up or import): a command that is given other values needs a process of its own.
# Two aside, which a command's environment keeps for the processes it starts: PYTHONPATH (the server's has
# the checkout first, as the tests' commands have) and PYTHONHASHSEED (the hash seed is the server's, see
# above; dask's multiprocessing scheduler sets it in the test process once it has run)
READ_AT_START = ("PYTHON", "LANG", "LC_", "NUMBA_", "DASK_")
NOT_COMPARED = ("PYTHONPATH", "PYTHONHASHSEED")

# the message of a command to the server: a 4-byte length, then JSON {"args", "cwd", "env", "timeout"}; its
# three file descriptors (stdin, stdout, stderr) ride with it. The server answers with one JSON line
# {"returncode": N} (-N for signal N, null when the command ran past its timeout and was killed), or
# {"refused": why}.
SERVER = r'''
import json, os, runpy, select, socket, struct, sys, time
import structperc.cli.main  # noqa: F401  what `python -m structperc` imports first

PATH, PREFIXES, ASIDE, SETTINGS = sys.argv[1], tuple(json.loads(sys.argv[2])), json.loads(sys.argv[3]), \
    json.loads(sys.argv[4])


def receive(connection):
    """(request, its file descriptors), or (None, those received) when the connection closed first."""
    head, fds, _, _ = socket.recv_fds(connection, 4, 3)
    while 0 < len(head) < 4:
        head += connection.recv(4 - len(head))
    if len(head) < 4:
        return None, fds
    size, = struct.unpack("!I", head)
    body = b""
    while len(body) < size:
        chunk = connection.recv(size - len(body))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body), fds


def command(request, fds):
    """The command's process: its streams, environment, directory and arguments, then `-m structperc`.
    Never returns (the command exits)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = os.getcwd()  # as -m puts the working directory first
    sys.argv = ["-m", *request["args"]]
    runpy.run_module("structperc", run_name="__main__", alter_sys=True)
    sys.exit(0)


def wait(pid, timeout):
    """The exit status of ``pid`` (-N for signal N), or None when it ran past ``timeout`` (then killed)."""
    if timeout is None:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def waiter(connection, request, fds):
    """Between the server and the command: starts it, waits for it, answers. Never returns."""
    pid = os.fork()
    if pid == 0:
        connection.close()
        command(request, fds)
    for fd in fds:
        os.close(fd)
    connection.sendall(json.dumps({"returncode": wait(pid, request.get("timeout"))}).encode() + b"\n")
    os._exit(0)


listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(PATH)
listener.listen(64)
waiters = set()
while True:
    ready, _, _ = select.select([listener, 0], [], [], 1.0)
    for pid in list(waiters):
        if os.waitpid(pid, os.WNOHANG)[0]:
            waiters.discard(pid)
    if 0 in ready and not os.read(0, 1):  # the test process ended
        break
    if listener not in ready:
        continue
    connection, _ = listener.accept()
    request, fds = receive(connection)
    if request is None:  # a check that the server listens
        connection.close()
        for fd in fds:
            os.close(fd)
        continue
    differ = sorted(key for key in {*request["env"], *SETTINGS} if key.startswith(PREFIXES)
                    and key not in ASIDE and request["env"].get(key) != SETTINGS.get(key))
    if differ or len(fds) != 3:
        why = f"{differ}: read as a process starts or imports numba or dask, and they differ from the server's" \
              if differ else "no standard streams"
        connection.sendall(json.dumps({"refused": why}).encode() + b"\n")
    else:
        pid = os.fork()
        if pid == 0:
            listener.close()
            waiter(connection, request, fds)
        waiters.add(pid)
    connection.close()
    for fd in fds:
        os.close(fd)
'''

# a `structperc` for a shell: runs the command in the server with this process's streams, exits as it exits
LAUNCHER = r'''#!{python} -IS
import json, os, signal, socket, struct, sys
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect({path!r})
body = json.dumps({{"args": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
socket.send_fds(connection, [struct.pack("!I", len(body)) + body], [0, 1, 2])
answer = b""
while not answer.endswith(b"\n"):
    chunk = connection.recv(4096)
    if not chunk:
        sys.exit("structperc (forked): the server ended")
    answer += chunk
answer = json.loads(answer)
if "refused" in answer:
    sys.exit("structperc (forked): refused: " + answer["refused"])
code = answer["returncode"]
if code < 0:  # ended by a signal: end by it too
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
'''


class _Server:
    def __init__(self):
        # the test process's environment as it is now (conftest.py has cleared the user's NUMBA_ settings)
        self.env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.folder = tempfile.mkdtemp(prefix="structperc-forked-")
        self.path = os.path.join(self.folder, "socket")
        settings = {key: value for key, value in self.env.items() if key.startswith(READ_AT_START)}
        # its stdin is a pipe from this process: when this process ends, the server reads its end and ends too
        self.process = subprocess.Popen([sys.executable, "-c", SERVER, self.path, json.dumps(READ_AT_START),
                                         json.dumps(NOT_COMPARED), json.dumps(settings)],
                                        env=self.env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)

    def connect(self):
        """A connection to the server, once it listens."""
        import time

        deadline = time.monotonic() + 60
        while self.process.poll() is None and time.monotonic() < deadline:
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                connection.connect(self.path)
                return connection
            except (FileNotFoundError, ConnectionRefusedError):  # not listening yet
                connection.close()
                time.sleep(0.01)
        raise RuntimeError(f"the forked command server is not listening (exit {self.process.poll()})")

    def close(self):
        import shutil

        self.process.stdin.close()
        self.process.wait(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)


_servers = {}
_servers_lock = threading.Lock()


def server():
    """This process's server, started on first use."""
    with _servers_lock:
        found = _servers.get(os.getpid())
        if found is None:
            import atexit

            found = _servers[os.getpid()] = _Server()
            atexit.register(found.close)
        return found


def launcher(path):
    """Write at ``path`` a ``structperc`` executable that runs its command in this process's server (forked
    from it, with the executable's own arguments, environment, working directory and standard streams);
    its environment's ``READ_AT_START`` settings must be the server's, or it exits 1 saying so."""
    path = Path(path)
    found = server()
    found.connect().close()  # it listens
    path.write_text(LAUNCHER.format(python=sys.executable, path=found.path))
    path.chmod(0o755)
    return path


def executable():
    """The path of a ``structperc`` executable (``launcher``) in the server's folder, for a command line."""
    found = server()
    path = Path(found.folder) / "bin" / "structperc"
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        launcher(path)
    return path


def _text(data, encoding, errors):
    """Bytes decoded as ``subprocess.run(text=True)`` decodes a captured stream (universal newlines)."""
    return data.decode(encoding, errors).replace("\r\n", "\n").replace("\r", "\n")


def run(args, cwd=None, env=None, input=None, timeout=None, check=False, encoding=None, errors=None):
    """``subprocess.run([sys.executable, "-m", "structperc", *args], cwd=cwd, env=env, input=input,
    timeout=timeout, check=check, capture_output=True, text=True)``, in a process forked from the server:
    stdin a pipe holding ``input`` (else /dev/null), stdout and stderr captured in files. ``env`` (default:
    this process's environment) gets PYTHONPATH as the server's; its settings named by ``READ_AT_START``
    must be the server's (else ValueError)."""
    found = server()
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = found.env["PYTHONPATH"]
    encoding = encoding or ("utf-8" if sys.flags.utf8_mode else locale.getpreferredencoding(False))
    errors = errors or "strict"
    args = [str(arg) for arg in args]
    command = [sys.executable, "-m", "structperc", *args]
    request = {"args": args, "cwd": str(Path.cwd() if cwd is None else cwd), "env": env, "timeout": timeout}
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        if input is None:
            stdin, feed = os.open(os.devnull, os.O_RDONLY), None
        else:
            stdin, feed = os.pipe()
        try:
            connection = found.connect()
            body = json.dumps(request).encode()
            socket.send_fds(connection, [struct.pack("!I", len(body)) + body], [stdin, stdout.fileno(), stderr.fileno()])
        finally:
            os.close(stdin)
        with connection:
            if feed is not None:
                data = memoryview(input.encode(encoding, errors))
                try:
                    while data:  # the command reads it as it comes
                        data = data[os.write(feed, data):]
                except BrokenPipeError:  # the command did not read it all
                    pass
                finally:
                    os.close(feed)
            answer = b""
            while not answer.endswith(b"\n"):
                chunk = connection.recv(4096)
                if not chunk:
                    raise RuntimeError(f"the forked command server ended (exit {found.process.poll()})")
                answer += chunk
        answer = json.loads(answer)
        if "refused" in answer:
            raise ValueError(f"{answer['refused']}: run this command in a process of its own")
        stdout.seek(0)
        stderr.seek(0)
        out, err = _text(stdout.read(), encoding, errors), _text(stderr.read(), encoding, errors)
    if answer["returncode"] is None:
        raise subprocess.TimeoutExpired(command, timeout, output=out, stderr=err)
    done = subprocess.CompletedProcess(command, answer["returncode"], out, err)
    if check:
        done.check_returncode()
    return done
