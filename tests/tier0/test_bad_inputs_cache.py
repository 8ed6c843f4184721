"""Bad-input corpus: the build cache and the environment knobs of `ktile/config.py`.

A cache folder that cannot be used is refused with a KernelError naming KTILE_CACHE_DIR and
the part of the path in the way. A damaged entry (any file emptied, truncated, corrupted or
missing; a manifest that lies) is never a hit: it is rebuilt, silently and whole. A knob set
to a value ktile does not know is refused naming the variable and the values it takes.

The "compiler" is a small Python function, so none of this needs nvcc or clang.
"""
import json
import os
import sys
from pathlib import Path

import pytest
from bad_inputs import refused

import ktile as hk
from ktile.errors import InputError, KernelError
from ktile.runtime.cache import MANIFEST, BuildCache, CompileResult, build_key

KEY = build_key(source="void k() {}", headers="h", toolchain="fake 1", flags=["-O3"],
                target="sm_90a")
SOURCE = "void k() {}"
LOG_TEXT = "ptxas info    : Used 8 registers\n"


class FakeCompiler:
    """Writes `CODE:<source>` and a ptxas-like log; counts its runs."""

    def __init__(self):
        self.runs = 0

    def __call__(self, source: Path, code: Path) -> CompileResult:
        self.runs += 1
        code.write_bytes(b"CODE:" + source.read_bytes())
        return CompileResult(["fake-cc", str(source), "-o", str(code)], 0, LOG_TEXT)


def build(cache: BuildCache, compiler: FakeCompiler):
    return cache.get_or_build(KEY, SOURCE, compiler, source_name="kernel.cu",
                              code_name="kernel.cubin")


@pytest.fixture
def no_cache_env(monkeypatch):
    for name in ("KTILE_CACHE_DIR", "KTILE_TARGET", "KTILE_BACKEND", "KTILE_NVCC",
                 "KTILE_HIPCC", "KTILE_CLANG", "KTILE_LLVM_BIN"):
        monkeypatch.delenv(name, raising=False)


# ---- a cache folder that cannot be used ------------------------------------------------------

def _under_a_file(tmp: Path) -> tuple[str, str]:
    (tmp / "notes.txt").write_text("a file")
    return str(tmp / "notes.txt" / "cache"), "notes.txt exists and is not a folder"


def _is_a_file(tmp: Path) -> tuple[str, str]:
    (tmp / "cache").write_text("a file")
    return str(tmp / "cache"), "cache exists and is not a folder"


def _deep_under_a_file(tmp: Path) -> tuple[str, str]:
    (tmp / "notes.txt").write_text("a file")
    return str(tmp / "notes.txt" / "a" / "b" / "c"), "notes.txt exists and is not a folder"


def _dangling_link(tmp: Path) -> tuple[str, str]:
    (tmp / "cache").symlink_to(tmp / "gone")
    return str(tmp / "cache"), "symbolic link to"


def _under_a_dangling_link(tmp: Path) -> tuple[str, str]:
    (tmp / "link").symlink_to(tmp / "gone" / "deeper")
    return str(tmp / "link" / "cache"), "which does not exist"


def _looping_link(tmp: Path) -> tuple[str, str]:
    (tmp / "one").symlink_to(tmp / "two")
    (tmp / "two").symlink_to(tmp / "one")
    return str(tmp / "one"), "loops back on itself"


def _under_a_looping_link(tmp: Path) -> tuple[str, str]:
    (tmp / "self").symlink_to(tmp / "self")
    return str(tmp / "self" / "cache"), "loops back on itself"


def _link_to_a_file(tmp: Path) -> tuple[str, str]:
    (tmp / "notes.txt").write_text("a file")
    (tmp / "cache").symlink_to(tmp / "notes.txt")
    return str(tmp / "cache"), "exists and is not a folder"


def _a_device(tmp: Path) -> tuple[str, str]:
    return "/dev/null", "/dev/null exists and is not a folder"


def _under_a_device(tmp: Path) -> tuple[str, str]:
    return "/dev/null/ktile", "/dev/null exists and is not a folder"


def _in_proc(tmp: Path) -> tuple[str, str]:
    return "/proc/self/ktile-cache", "cannot be created or written"


def _blank(tmp: Path) -> tuple[str, str]:
    return "   ", "only blanks"


def _unknown_users_home(tmp: Path) -> tuple[str, str]:
    return "~no_such_user_of_ktile/cache", "home folder"


UNUSABLE_FOLDERS = {
    "under-a-regular-file": _under_a_file,
    "is-a-regular-file": _is_a_file,
    "three-levels-under-a-file": _deep_under_a_file,
    "dangling-symlink": _dangling_link,
    "under-a-dangling-symlink": _under_a_dangling_link,
    "looping-symlinks": _looping_link,
    "under-a-self-loop-symlink": _under_a_looping_link,
    "symlink-to-a-file": _link_to_a_file,
    "a-character-device": _a_device,
    "under-a-character-device": _under_a_device,
    "under-proc": _in_proc,
    "only-blanks": _blank,
    "unknown-users-home": _unknown_users_home,
}


@pytest.mark.parametrize("make", UNUSABLE_FOLDERS.values(), ids=list(UNUSABLE_FOLDERS))
def test_an_unusable_cache_folder_is_refused_naming_the_variable(make, tmp_path, monkeypatch,
                                                                 no_cache_env):
    value, why = make(tmp_path)
    monkeypatch.setenv("KTILE_CACHE_DIR", value)
    compiler = FakeCompiler()
    err = refused(lambda: build(BuildCache.default(), compiler), "KTILE_CACHE_DIR", why,
                  "cannot be used")
    assert "set KTILE_CACHE_DIR to a folder" in err.hint
    assert compiler.runs == 0                    # refused before anything was compiled


def _layout_folder_is_a_file(root: Path) -> Path:
    return BuildCache(root).folder(KEY).parent.parent


def _prefix_folder_is_a_file(root: Path) -> Path:
    return BuildCache(root).folder(KEY).parent


def _entry_folder_is_a_file(root: Path) -> Path:
    return BuildCache(root).folder(KEY)


@pytest.mark.parametrize("blocked", [_layout_folder_is_a_file, _prefix_folder_is_a_file,
                                     _entry_folder_is_a_file],
                         ids=["layout-folder", "key-prefix-folder", "entry-folder"])
def test_a_file_inside_the_cache_where_a_folder_belongs_is_named(blocked, tmp_path, monkeypatch,
                                                                 no_cache_env):
    root = tmp_path / "cache"
    monkeypatch.setenv("KTILE_CACHE_DIR", str(root))
    path = blocked(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("in the way")
    refused(lambda: build(BuildCache.default(), FakeCompiler()), "KTILE_CACHE_DIR",
            f"{path} exists and is not a folder")


def test_the_default_folder_is_named_when_the_variable_is_unset(tmp_path, monkeypatch,
                                                                no_cache_env):
    (tmp_path / "home").write_text("HOME is a file here")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    err = refused(lambda: build(BuildCache.default(), FakeCompiler()), "KTILE_CACHE_DIR is not set",
                  "the default", "exists and is not a folder")
    assert str(tmp_path / "home") in str(err)


def test_a_relative_cache_folder_is_named_in_full(tmp_path, monkeypatch, no_cache_env):
    (tmp_path / "notes.txt").write_text("a file")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KTILE_CACHE_DIR", "notes.txt/cache")
    refused(lambda: build(BuildCache.default(), FakeCompiler()), "KTILE_CACHE_DIR=notes.txt/cache",
            str(tmp_path / "notes.txt" / "cache"))


def test_an_unusable_folder_is_refused_through_a_kernel_build(tmp_path, monkeypatch,
                                                              no_cache_env):
    """The user meets it through `k.build`: the same error, not a raw NotADirectoryError."""
    (tmp_path / "notes.txt").write_text("a file")
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "notes.txt" / "cache"))
    monkeypatch.setenv("KTILE_NVCC", sys.executable)     # found, never reached

    @hk.kernel(grid=(1, 1, 1))
    def copy(a: hk.Tensor[hk.float32], o: hk.Tensor[hk.float32]):
        idx = hk.tile_coord(0, 0, 0, 0)
        o[idx] = a[idx].load(hk.RT(hk.float32, 16, 64))
    refused(lambda: copy.build(target="sm_90a"), "KTILE_CACHE_DIR", "is not a folder")


# ---- damaged entries are rebuilt ---------------------------------------------------------

def _emptied(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _corrupted(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x20                 # one bit, as a disk error would
    path.write_bytes(bytes(data))


def _removed(path: Path) -> None:
    path.unlink()


def _made_a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


DAMAGES = {"emptied": _emptied, "truncated": _truncated, "one-bit-flipped": _corrupted,
           "missing": _removed, "a-folder-instead": _made_a_folder}
FILES = ("kernel.cu", "kernel.cubin", "command.txt", "log.txt", MANIFEST)
# every file of an entry, each way a file gets damaged (a folder where the manifest belongs is
# left out: the writer could not replace it, and nothing but a person makes one)
DAMAGED_FILES = [pytest.param(name, damage, id=f"{name}-{how}")
                 for name in FILES for how, damage in DAMAGES.items()
                 if not (name == MANIFEST and damage is _made_a_folder)]


@pytest.mark.parametrize("name, damage", DAMAGED_FILES)
def test_a_damaged_entry_is_no_hit_and_is_rebuilt_whole(name, damage, tmp_path):
    cache, compiler = BuildCache(tmp_path / "cache"), FakeCompiler()
    entry, _ = build(cache, compiler)
    whole = {f: (entry.folder / f).read_bytes() for f in FILES if f != MANIFEST}
    damage(entry.folder / name)
    assert cache.get(KEY) is None
    if damage is _made_a_folder:
        (entry.folder / name).rmdir()            # the writer needs the name back as a file
    rebuilt, hit = build(cache, compiler)
    assert not hit and compiler.runs == 2
    assert {f: (rebuilt.folder / f).read_bytes() for f in whole} == whole
    assert cache.get(KEY) is not None


def test_an_emptied_log_is_not_read_back_by_the_gate(tmp_path):
    """The NVIDIA gate reads the resources from the log: an emptied log must rebuild, not
    report a kernel without registers (issue #9)."""
    cache, compiler = BuildCache(tmp_path / "cache"), FakeCompiler()
    entry, _ = build(cache, compiler)
    entry.log_path.write_text("")
    again, hit = build(cache, compiler)
    assert not hit and again.log() == LOG_TEXT


def _rewrite_manifest(folder: Path, change) -> None:
    path = folder / MANIFEST
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps(change(manifest)))


def _files_without(name: str):
    def change(manifest):
        manifest["files"].pop(name)
        return manifest
    return change


MANIFEST_LIES = {
    "a-json-list": lambda m: [m],
    "a-json-string": lambda m: "manifest",
    "another-key": lambda m: {**m, "key": "0" * 64},
    "no-file-list": lambda m: {k: v for k, v in m.items() if k != "files"},
    "file-list-not-a-dict": lambda m: {**m, "files": list(m["files"])},
    "log-not-listed": _files_without("log.txt"),
    "command-not-listed": _files_without("command.txt"),
    "code-not-listed": _files_without("kernel.cubin"),
    "code-outside-the-entry": lambda m: {**m, "code": "../../outside.bin",
                                         "files": {**m["files"], "../../outside.bin":
                                                   m["files"]["kernel.cubin"]}},
    "code-by-absolute-path": lambda m: {**m, "code": "/etc/hostname"},
    "code-name-not-a-string": lambda m: {**m, "code": 7},
}


@pytest.mark.parametrize("change", MANIFEST_LIES.values(), ids=list(MANIFEST_LIES))
def test_a_manifest_that_lies_is_no_hit(change, tmp_path):
    cache, compiler = BuildCache(tmp_path / "cache"), FakeCompiler()
    entry, _ = build(cache, compiler)
    (tmp_path / "cache" / "v2" / "outside.bin").write_bytes(entry.code())
    _rewrite_manifest(entry.folder, change)
    assert cache.get(KEY) is None
    rebuilt, hit = build(cache, compiler)
    assert not hit and rebuilt.code_path.parent == rebuilt.folder


def test_an_entry_of_the_old_layout_is_not_read(tmp_path):
    """v1 entries checked only the code object: they are left alone, and built anew."""
    cache, compiler = BuildCache(tmp_path / "cache"), FakeCompiler()
    old = tmp_path / "cache" / "v1" / KEY[:2] / KEY
    old.mkdir(parents=True)
    (old / MANIFEST).write_text(json.dumps({"key": KEY, "code": "kernel.cubin"}))
    _, hit = build(cache, compiler)
    assert not hit and compiler.runs == 1
    assert json.loads((old / MANIFEST).read_text()) == {"key": KEY, "code": "kernel.cubin"}


# ---- the other knobs -------------------------------------------------------------------------

@hk.kernel(grid=(1, 1, 1))
def scale(a: hk.Tensor[hk.float32], o: hk.Tensor[hk.float32]):
    idx = hk.tile_coord(0, 0, 0, 0)
    o[idx] = a[idx].load(hk.RT(hk.float32, 16, 64))


@pytest.mark.parametrize("value, words", [
    ("nonsense", ()), ("SM_90A", ("did you mean sm_90a",)), ("gfx90a", ()),
    (" gfx1100", ()), ("sm90", ())], ids=["nonsense", "upper-case", "unknown-arch",
                                            "leading-blank", "no-underscore"])
def test_an_unknown_ktile_target_is_refused_naming_it(value, words, monkeypatch, no_cache_env):
    monkeypatch.setenv("KTILE_TARGET", value)
    err = refused(lambda: scale.source(), f"KTILE_TARGET={value}", "is not a target", *words)
    assert "sm_90a" in err.hint and "gfx1100" in err.hint


def test_an_empty_ktile_target_is_the_default(monkeypatch, no_cache_env):
    monkeypatch.setenv("KTILE_TARGET", "")
    assert "amd" in scale.source().lower()


@pytest.mark.parametrize("value", ["bogus", "gpu", "cuda", "Interpret"])
def test_an_unknown_ktile_backend_is_refused_naming_it(value, monkeypatch, no_cache_env):
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("KTILE_BACKEND", value)
    a, o = np.ones((1, 1, 16, 64), np.float32), np.zeros((1, 1, 16, 64), np.float32)
    refused(lambda: scale(a, o), "KTILE_BACKEND", repr(value), "auto", "interpret",
            kind=InputError)


def test_an_empty_ktile_backend_is_the_default(monkeypatch, no_cache_env):
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("KTILE_BACKEND", "")
    a, o = np.ones((1, 1, 16, 64), np.float32), np.zeros((1, 1, 16, 64), np.float32)
    scale(a, o)
    assert (o == 1).all()


def _nowhere(tmp: Path) -> str:
    return str(tmp / "nowhere" / "nvcc")


def _a_folder(tmp: Path) -> str:
    return str(tmp)


def _not_executable(tmp: Path) -> str:
    (tmp / "nvcc").write_text("#!/bin/sh\n")
    return str(tmp / "nvcc")


COMPILER_PATHS = {"nowhere": _nowhere, "a-folder": _a_folder, "not-executable": _not_executable}


@pytest.mark.parametrize("make", COMPILER_PATHS.values(), ids=list(COMPILER_PATHS))
@pytest.mark.parametrize("variable, target", [("KTILE_NVCC", "sm_90a"),
                                              ("KTILE_CLANG", "gfx1100"),
                                              ("KTILE_HIPCC", "gfx942")])
def test_a_compiler_variable_pointing_nowhere_is_refused(variable, target, make, tmp_path,
                                                         monkeypatch, no_cache_env):
    value = make(tmp_path)
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "cache"))
    err = refused(lambda: scale.build(target=target), f"{variable}={value}",
                  "is not an executable file")
    assert variable in err.hint


def test_a_compiler_that_fails_its_version_query_is_refused(tmp_path, monkeypatch, no_cache_env):
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho 'not a compiler' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KTILE_NVCC", str(fake))
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "cache"))
    refused(lambda: scale.build(target="sm_90a"), "--version failed", "exit 3", "KTILE_NVCC")


def test_an_llvm_bin_pointing_nowhere_is_named_by_cocheck(tmp_path, monkeypatch, no_cache_env):
    from bad_inputs import cli_refused, run_cli
    code = tmp_path / "k.hsaco"
    code.write_bytes(b"\x7fELF" + bytes(60))
    monkeypatch.setenv("KTILE_LLVM_BIN", str(tmp_path / "no-llvm-here"))
    cli_refused(run_cli("ktile", "cocheck", str(code)), "KTILE_LLVM_BIN", codes=(2,))


def test_every_knob_has_cases_here():
    """The corpus above covers each knob a user sets (KTILE_UPDATE_GOLDEN is the tests' own):
    a new knob in config.py must join it."""
    from ktile import config
    covered = {"KTILE_TARGET", "KTILE_BACKEND", "KTILE_CACHE_DIR", "KTILE_NVCC", "KTILE_HIPCC",
               "KTILE_CLANG", "KTILE_LLVM_BIN", "KTILE_UPDATE_GOLDEN"}
    assert {v.name for v in config.ALL} <= covered


# ---- the tools preflight (scripts/check-tools) -----------------------------------------------

CHECK_TOOLS = Path(__file__).resolve().parents[2] / "scripts" / "check-tools"


def check_tools(tmp_path: Path, ci: str):
    """check-tools with no LLVM tools anywhere (KTILE_LLVM_BIN an empty folder) and no nvcc."""
    import subprocess
    (tmp_path / "llvm").mkdir(exist_ok=True)
    env = {**os.environ, "KTILE_LLVM_BIN": str(tmp_path / "llvm"), "PATH": str(tmp_path),
           "KTILE_NVCC": str(tmp_path / "no-nvcc"), "CI": ci}
    return subprocess.run([sys.executable, str(CHECK_TOOLS)], env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_under_ci_a_missing_tool_stops_the_run_naming_its_package(ci, tmp_path):
    done = check_tools(tmp_path, ci)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    for tool, package in (("clang-offload-bundler", "clang-tools-22"), ("ld.lld", "lld-22"),
                          ("mlir-opt", "mlir-22-tools"), ("llvm-objdump", "llvm-22")):
        [line] = [x for x in lines if x.startswith(f"check-tools: error: {tool} is missing")]
        assert f"Debian package {package}" in line
    assert any(x.startswith("check-tools: error: nvcc is missing") for x in lines)
    assert "apt-get install -y clang-22 clang-tools-22 lld-22 llvm-22 mlir-22-tools" in done.stderr


@pytest.mark.parametrize("ci", ["", "0", "false"])
def test_outside_ci_a_missing_tool_is_a_warning(ci, tmp_path):
    done = check_tools(tmp_path, ci)
    assert done.returncode == 0
    assert "check-tools: warning: clang-offload-bundler is missing" in done.stderr
    assert "the tests that need them skip" in done.stderr


def test_a_bare_nvcc_name_is_looked_up_on_path(tmp_path, monkeypatch, no_cache_env):
    from ktile.runtime.toolchains.nvcc import find_nvcc
    fake = tmp_path / "my-nvcc"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("KTILE_NVCC", "my-nvcc")
    assert find_nvcc() == str(fake)
    monkeypatch.setenv("KTILE_NVCC", "no-such-nvcc")
    err = refused(find_nvcc, "KTILE_NVCC=no-such-nvcc", "not an executable file on PATH")
    assert "KTILE_NVCC" in err.hint


def test_a_failed_version_query_shows_its_first_line_only(tmp_path, monkeypatch, no_cache_env):
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho 'first: no licence'\necho 'second line'\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KTILE_NVCC", str(fake))
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "cache"))
    err = refused(lambda: scale.build(target="sm_90a"), "--version failed", "first: no licence")
    assert "second line" not in str(err)
