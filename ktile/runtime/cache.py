"""The content-hash build cache, shared by every backend.

    key = build_key(source=..., headers=header_hash(), toolchain=..., flags=[...], target=...)
    entry = BuildCache.default().get_or_build(key, source, compiler, meta={...})

A key is the sha256 of everything that decides the code object: the generated source, the
content of every tile header (hashed once per process), the toolchain's identity and version,
its flags and the target. An entry is one folder holding the source, the command, the compiler
log, the code object and `manifest.json`, which lists every one of those files with its sha256.
The manifest is written last, so an entry without one is not a build.

Every file is written to a temporary file in its own folder, fsynced and renamed over its
name, so a reader sees the old file or the new one, never half of one. Builders of one key
take the key's lock file (fcntl.flock) and look again once they hold it, so processes building
the same kernel at once build it once. An entry any of whose files no longer matches its
manifest's checksum (a truncated write, a disk error, a hand edit: the log is read back by the
NVIDIA resource gate, so an emptied log would fail every later build) is not a hit: it is
rebuilt. A failed build keeps its source, command and log in the entry folder and says where.
A cache folder that cannot be written (a path under a regular file, a dangling symlink, a
read-only disk) is a KernelError naming the folder, why, and KTILE_CACHE_DIR.
"""
from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import json
import os
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import config
from ..errors import KernelError
from .builds import record        # the process's build counter (ktile.runtime.build_count)

INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
LAYOUT = "v2"             # bump when the entry layout changes: old entries are then not read
                          # (v2: the manifest checks every file of an entry, not only the code)
MANIFEST = "manifest.json"
COMMAND = "command.txt"
LOG = "log.txt"


# ---- the key -----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def header_hash(include_dir: Path = INCLUDE_DIR) -> str:
    """sha256 over every file under `include_dir` (relative path and content), computed once
    per process: a header edit changes every key, whichever headers a kernel includes."""
    digest = hashlib.sha256()
    root = Path(include_dir)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    for path in files:
        _update(digest, path.relative_to(root).as_posix(), path.read_bytes())
    return digest.hexdigest()


def build_key(*, source: str, headers: str, toolchain: str, flags: list[str] | tuple[str, ...],
              target: str) -> str:
    """The cache key: each part length-prefixed, so no two part lists hash alike."""
    digest = hashlib.sha256()
    _update(digest, "source", source.encode())
    _update(digest, "headers", headers.encode())
    _update(digest, "toolchain", toolchain.encode())
    _update(digest, "flags", "\0".join(flags).encode())
    _update(digest, "target", target.encode())
    return digest.hexdigest()


def _update(digest, name: str, data: bytes) -> None:
    digest.update(f"{name}:{len(data)}:".encode())
    digest.update(data)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- atomic files ------------------------------------------------------------------------

def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` so that a reader sees the old file or all of the new one."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        _remove_quietly(Path(tmp))
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (a crash after it keeps the new name)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


# ---- compiling ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CompileResult:
    """What one compiler run did: its command line, exit status and output."""
    command: list[str]
    returncode: int
    log: str


# compiler(source_path, code_path) -> CompileResult: writes the code object to code_path
Compiler = Callable[[Path, Path], CompileResult]


def run_command(command: list[str], timeout: float | None = None) -> CompileResult:
    """Run a compiler command; stdout and stderr together are its log. A command that cannot
    start is a failed build with the shell's exit status (127: not found, 126: found but not
    runnable, as a file without execute permission or in no executable format) and the
    system's reason as its log, so the build reports it as any failed compile."""
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", timeout=timeout)
    except FileNotFoundError as exc:
        return CompileResult(list(command), 127, f"cannot run {command[0]}: {exc}\n")
    except OSError as exc:
        return CompileResult(list(command), 126, f"cannot run {command[0]}: {exc}\n")
    except subprocess.TimeoutExpired as exc:
        output = exc.output.decode() if isinstance(exc.output, bytes) else exc.output or ""
        return CompileResult(list(command), 124, f"{output}\ntimed out after {timeout} s\n")
    return CompileResult(list(command), done.returncode, done.stdout)


# ---- entries -----------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheEntry:
    """A verified build in the cache."""
    folder: Path
    manifest: dict

    @property
    def key(self) -> str:
        return self.manifest["key"]

    @property
    def code_path(self) -> Path:
        return self.folder / self.manifest["code"]

    @property
    def source_path(self) -> Path:
        return self.folder / self.manifest["source"]

    @property
    def log_path(self) -> Path:
        return self.folder / LOG

    @property
    def command_path(self) -> Path:
        return self.folder / COMMAND

    def code(self) -> bytes:
        return self.code_path.read_bytes()

    def log(self) -> str:
        return self.log_path.read_text()


class BuildFailed(Exception):
    """A compiler run that failed; its source, command and log stay in `folder`."""

    def __init__(self, folder: Path, source_path: Path, result: CompileResult):
        self.folder = folder
        self.source_path = source_path
        self.result = result
        super().__init__(f"the build failed (exit {result.returncode}); source, command and log "
                         f"are kept in {folder}")

    @property
    def log_path(self) -> Path:
        return self.folder / LOG

    @property
    def log(self) -> str:
        return self.result.log


class BuildCache:
    """One cache folder; entries at `<root>/v1/<key[:2]>/<key>/`."""

    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser()

    @classmethod
    def default(cls) -> "BuildCache":
        """The folder `KTILE_CACHE_DIR` names, else ~/.cache/ktile (read at each call)."""
        named = config.CACHE_DIR.get()
        if named and not named.strip():
            raise _cache_dir_error(repr(named), "the value is only blanks")
        try:
            return cls(Path(named or Path.home() / ".cache" / "ktile").expanduser().absolute())
        except RuntimeError:                 # "~user/…" of an unknown user, or no home at all
            raise _cache_dir_error(named or "~/.cache/ktile",
                                   "its home folder (~) cannot be found") from None

    def folder(self, key: str) -> Path:
        return self.root / LAYOUT / key[:2] / key

    def get(self, key: str) -> CacheEntry | None:
        """The entry of `key` if it is complete and every file of it matches its checksum."""
        folder = self.folder(key)
        try:
            manifest = json.loads((folder / MANIFEST).read_text())
            whole = _entry_is_whole(folder, manifest, key)
        except (OSError, ValueError):        # no manifest, an unreadable file, bad JSON
            return None
        return CacheEntry(folder, manifest) if whole else None

    def get_or_build(self, key: str, source: str, compiler: Compiler, *,
                     source_name: str = "kernel.src", code_name: str = "kernel.bin",
                     meta: dict | None = None) -> tuple[CacheEntry, bool]:
        """The entry of `key`, built with `compiler` when missing or damaged; and whether
        it was a hit. Raises BuildFailed when the compiler fails."""
        entry = self.get(key)
        if entry is not None:
            record(hit=True, key=key)
            return entry, True
        with self._locked(key):
            entry = self.get(key)  # another process may have built it while we waited
            if entry is not None:
                record(hit=True, key=key)
                return entry, True
            try:
                built = self._build(key, source, compiler, source_name, code_name, meta or {})
            finally:
                record(hit=False, key=key)  # a failed compile is a compiler invocation too
            return built, False

    @contextmanager
    def _writing(self):
        """Turn a failure to write the cache folder into the user's error (the compiler's own
        failures are not inside this)."""
        try:
            yield
        except OSError as exc:
            raise _unusable(self.root, exc) from None

    @contextmanager
    def _locked(self, key: str):
        lock_path = self.folder(key).with_suffix(".lock")
        with self._writing():
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+b")
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _build(self, key: str, source: str, compiler: Compiler, source_name: str,
               code_name: str, meta: dict) -> CacheEntry:
        folder = self.folder(key)
        source_path, code_path = folder / source_name, folder / code_name
        scratch = folder / f".{code_name}.{os.getpid()}.tmp"
        with self._writing():
            folder.mkdir(parents=True, exist_ok=True)
            _remove_quietly(folder / MANIFEST)  # a damaged entry stops being one before we touch it
            write_atomic(source_path, source)
            _remove_quietly(scratch)
        start = time.perf_counter()
        try:
            result = compiler(source_path, scratch)
            seconds = time.perf_counter() - start
            with self._writing():
                code = self._keep_output(folder, source_path, scratch, code_path, result)
        finally:
            _remove_quietly(scratch)
        files = {source_name: sha256_of(source.encode()), code_name: sha256_of(code),
                 COMMAND: sha256_of(_command_text(result).encode()),
                 LOG: sha256_of(result.log.encode())}
        manifest = {"key": key, "source": source_name, "code": code_name, "sha256": sha256_of(code),
                    "files": files, "bytes": len(code), "seconds": round(seconds, 3),
                    "created": time.time(), **meta}
        with self._writing():
            write_atomic(folder / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return CacheEntry(folder, manifest)

    @staticmethod
    def _keep_output(folder: Path, source_path: Path, scratch: Path, code_path: Path,
                     result: CompileResult) -> bytes:
        """Write the command and the log; move the code object into place and return it.
        Raises BuildFailed when the compiler failed or wrote no code object."""
        write_atomic(folder / COMMAND, _command_text(result))
        write_atomic(folder / LOG, result.log)
        if result.returncode != 0 or not scratch.is_file():
            raise BuildFailed(folder, source_path, result)
        code = scratch.read_bytes()
        _fsync_file(scratch)
        os.replace(scratch, code_path)  # the compiler wrote the scratch file in this folder
        return code


# ---- integrity -----------------------------------------------------------------------------

def _entry_is_whole(folder: Path, manifest: object, key: str) -> bool:
    """The manifest is this key's, lists the source, command, log and code object by plain
    names in `folder`, and every file it lists has the sha256 it records."""
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict):
        return False
    needed = {manifest.get("source"), manifest.get("code"), COMMAND, LOG}
    if not needed <= files.keys() or not all(map(_is_plain_name, files)):
        return False
    return all(sha256_of((folder / name).read_bytes()) == digest
               for name, digest in files.items())


def _is_plain_name(name: object) -> bool:
    """A file name inside the entry folder: no folder part, so a manifest cannot send a read
    elsewhere."""
    return isinstance(name, str) and name not in ("", ".", "..", MANIFEST) and \
        Path(name).name == name and "\0" not in name


# ---- an unusable cache folder ------------------------------------------------------------

def _unusable(root: Path, exc: OSError) -> KernelError:
    """The user's error for a cache folder that could not be written, saying why."""
    return _cache_dir_error(str(root), _why_unwritable(Path(exc.filename or root), exc))


def _cache_dir_error(folder: str, why: str) -> KernelError:
    """The cache folder, where its name came from (KTILE_CACHE_DIR or the default), and why
    it cannot be used."""
    name = config.CACHE_DIR.name
    named = config.CACHE_DIR.get()
    if named:
        value = named if named.strip() else repr(named)
        shown = f"{name}={value}" + ("" if folder in (named, value) else f" ({folder})")
    else:
        shown = f"{folder} (the default: {name} is not set)"
    return KernelError(f"the build cache folder {shown} cannot be used: {why}",
                       hint=f"set {name} to a folder this user can create and write (for "
                            f"example {name}=/tmp/ktile-cache), or fix the path named above")


def _why_unwritable(path: Path, exc: OSError) -> str:
    """Why `path` could not be written: the first part of it that is in the way, where one is."""
    for part in (path, *path.parents):
        if part.is_symlink() and not part.exists():
            return _broken_link(part)
        if not part.exists():
            continue
        if not part.is_dir() and (part != path or exc.errno == errno.EEXIST):
            return f"{part} exists and is not a folder"
        break
    reasons = {errno.EACCES: f"this user may not write {path}",
               errno.EPERM: f"this user may not write {path}",
               errno.EROFS: f"{path} is on a read-only file system",
               errno.ENOSPC: f"the disk holding {path} is full",
               errno.ELOOP: f"{path} goes through a symbolic link that loops"}
    return reasons.get(exc.errno, f"{path} cannot be created or written ({exc.strerror or exc})")


def _broken_link(link: Path) -> str:
    """A dangling symlink, or one in a loop (which `exists()` also calls missing)."""
    try:
        link.resolve(strict=True)
    except RuntimeError:
        return f"{link} is a symbolic link that loops back on itself"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{link} is a symbolic link that loops back on itself"
    return f"{link} is a symbolic link to {os.readlink(link)}, which does not exist"


def _command_text(result: CompileResult) -> str:
    """command.txt: the compiler's command line, as a shell would take it."""
    return _shell_line(result.command) + "\n"


def _shell_line(command: list[str]) -> str:
    import shlex
    return " ".join(shlex.quote(part) for part in command)
