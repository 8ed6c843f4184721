"""The build cache: its key, atomic writes, concurrent builders, damaged and failed entries.

The "compiler" here is a small Python script, so these run without nvcc.
"""
import json
import multiprocessing
import os
import sys
from pathlib import Path

import pytest

from ktile.runtime import cache as cache_mod
from ktile.runtime.cache import (BuildCache, BuildFailed, build_key, header_hash, run_command,
                                 write_atomic)

KEY_PARTS = dict(source="void k() {}", headers="h" * 64, toolchain="nvcc 13.0",
                 flags=["-O3", "-cubin"], target="sm_90a")

# Copies its source to its output after a pause, and leaves one file per build in a folder, so
# the test can count builds. Exit status 1 when the source says FAIL.
FAKE_COMPILER = r"""
import os, sys, time, uuid
src, out, builds = sys.argv[1], sys.argv[2], sys.argv[3]
time.sleep(float(os.environ.get("FAKE_CC_SLEEP", "0")))
text = open(src).read()
open(os.path.join(builds, uuid.uuid4().hex), "w").close()
if "FAIL" in text:
    print(f"{src}(2): error: the fake compiler refuses this")
    sys.exit(1)
print("ptxas info    : Used 8 registers")
with open(out, "wb") as f:
    f.write(b"CODE:" + text.encode())
"""


def fake_compiler(script: Path, builds: Path):
    def compile_source(source: Path, code: Path):
        return run_command([sys.executable, str(script), str(source), str(code), str(builds)])
    return compile_source


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_cc.py"
    script.write_text(FAKE_COMPILER)
    builds = tmp_path / "builds"
    builds.mkdir()
    return script, builds


def build_count(builds: Path) -> int:
    return len(list(builds.iterdir()))


# ---- the key -----------------------------------------------------------------------------

@pytest.mark.parametrize("part, other", [
    ("source", "void k() { }"), ("headers", "g" * 64), ("toolchain", "nvcc 13.1"),
    ("flags", ["-O2", "-cubin"]), ("target", "sm_100a")])
def test_key_changes_with_each_part(part, other):
    assert build_key(**{**KEY_PARTS, part: other}) != build_key(**KEY_PARTS)


def test_key_parts_do_not_run_into_each_other():
    one = build_key(**{**KEY_PARTS, "flags": ["-O3 -cubin"]})
    two = build_key(**{**KEY_PARTS, "flags": ["-O3", "-cubin"]})
    assert one != two
    assert build_key(**KEY_PARTS) == build_key(**KEY_PARTS)


def test_header_hash_covers_every_file(tmp_path):
    include = tmp_path / "include"
    (include / "ktile" / "nvidia").mkdir(parents=True)
    (include / "ktile" / "nvidia" / "a.hpp").write_text("int a;")
    first = header_hash.__wrapped__(include)
    (include / "ktile" / "unused.hpp").write_text("int b;")    # included by no kernel
    second = header_hash.__wrapped__(include)
    (include / "ktile" / "nvidia" / "a.hpp").write_text("int a2;")
    third = header_hash.__wrapped__(include)
    assert len({first, second, third}) == 3


def test_header_hash_is_computed_once_per_process(tmp_path):
    (tmp_path / "x.hpp").write_text("1")
    first = header_hash(tmp_path)
    (tmp_path / "x.hpp").write_text("2")
    assert header_hash(tmp_path) == first


# ---- atomic writes -----------------------------------------------------------------------

def test_write_atomic_replaces_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "f.txt"
    write_atomic(path, "old")
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_write_atomic_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    write_atomic(path, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(cache_mod.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


# ---- entries -----------------------------------------------------------------------------

def test_build_then_hit(tmp_path, fake):
    cache = BuildCache(tmp_path / "cache")
    key = build_key(**KEY_PARTS)
    entry, hit = cache.get_or_build(key, "void k() {}", fake_compiler(*fake),
                                    source_name="kernel.cu", code_name="kernel.cubin",
                                    meta={"kernel": "k"})
    assert not hit and entry.code() == b"CODE:void k() {}"
    manifest = json.loads((entry.folder / "manifest.json").read_text())
    assert manifest["key"] == key and manifest["kernel"] == "k"
    assert manifest["sha256"] == cache_mod.sha256_of(entry.code())
    assert manifest["files"] == {name: cache_mod.sha256_of((entry.folder / name).read_bytes())
                                 for name in ("kernel.cu", "kernel.cubin", "command.txt",
                                              "log.txt")}
    assert entry.source_path.read_text() == "void k() {}"
    assert "fake_cc.py" in entry.command_path.read_text()
    assert "Used 8 registers" in entry.log()
    again, hit = cache.get_or_build(key, "void k() {}", fake_compiler(*fake))
    assert hit and again.folder == entry.folder
    assert build_count(fake[1]) == 1


def test_default_folder_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "here"))
    assert BuildCache.default().root == tmp_path / "here"
    monkeypatch.delenv("KTILE_CACHE_DIR")
    assert BuildCache.default().root == Path.home() / ".cache" / "ktile"


def test_truncated_entry_is_rebuilt(tmp_path, fake):
    cache = BuildCache(tmp_path / "cache")
    key = build_key(**KEY_PARTS)
    entry, _ = cache.get_or_build(key, "void k() {}", fake_compiler(*fake))
    data = entry.code_path.read_bytes()
    entry.code_path.write_bytes(data[: len(data) // 2])      # a torn write
    assert cache.get(key) is None
    rebuilt, hit = cache.get_or_build(key, "void k() {}", fake_compiler(*fake))
    assert not hit and rebuilt.code() == data
    assert build_count(fake[1]) == 2
    assert cache.get(key) is not None


def test_entry_without_manifest_is_no_hit(tmp_path, fake):
    cache = BuildCache(tmp_path / "cache")
    key = build_key(**KEY_PARTS)
    entry, _ = cache.get_or_build(key, "void k() {}", fake_compiler(*fake))
    (entry.folder / "manifest.json").unlink()                  # a crash before the manifest
    assert cache.get(key) is None
    _, hit = cache.get_or_build(key, "void k() {}", fake_compiler(*fake))
    assert not hit


def test_failed_build_keeps_source_command_and_log(tmp_path, fake):
    cache = BuildCache(tmp_path / "cache")
    key = build_key(**{**KEY_PARTS, "source": "FAIL"})
    with pytest.raises(BuildFailed) as info:
        cache.get_or_build(key, "FAIL", fake_compiler(*fake), source_name="kernel.cu")
    failure = info.value
    assert str(failure.folder) in str(failure)
    assert (failure.folder / "kernel.cu").read_text() == "FAIL"
    assert "fake_cc.py" in (failure.folder / "command.txt").read_text()
    assert "the fake compiler refuses this" in failure.log_path.read_text()
    assert failure.result.returncode == 1
    assert cache.get(key) is None
    with pytest.raises(BuildFailed):          # not remembered as a build: tried again
        cache.get_or_build(key, "FAIL", fake_compiler(*fake), source_name="kernel.cu")
    assert build_count(fake[1]) == 2


def _build_in_process(root: str, script: str, builds: str, key: str, queue) -> None:
    cache = BuildCache(root)
    entry, hit = cache.get_or_build(key, "void k() {}", fake_compiler(Path(script), Path(builds)))
    queue.put((entry.code(), hit))


def test_concurrent_processes_build_one_key_once(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_CC_SLEEP", "0.5")
    root, key = tmp_path / "cache", build_key(**KEY_PARTS)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    workers = [context.Process(target=_build_in_process,
                               args=(str(root), str(fake[0]), str(fake[1]), key, queue))
               for _ in range(4)]
    for w in workers:
        w.start()
    results = [queue.get(timeout=60) for _ in workers]
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    assert build_count(fake[1]) == 1
    assert [code for code, _ in results] == [b"CODE:void k() {}"] * 4
    assert sorted(hit for _, hit in results) == [False, True, True, True]
    entry = BuildCache(root).get(key)
    assert entry is not None
    leftovers = [p.name for p in entry.folder.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert os.path.exists(str(entry.folder) + ".lock")


@pytest.mark.parametrize("mode, content, reason", [
    (0o644, "#!/bin/sh\necho hi\n", "Permission denied"),
    (0o755, "\x7fELF this is no program", "Exec format error"),
], ids=["not-executable", "no-executable-format"])
def test_a_compiler_that_cannot_start_is_a_failed_build_with_its_reason(tmp_path, mode, content,
                                                                       reason):
    from ktile import targets
    from ktile.errors import KernelError
    from ktile.runtime.toolchains.diagnostics import compile_error
    compiler = tmp_path / "cc"
    compiler.write_text(content)
    compiler.chmod(mode)
    result = run_command([str(compiler), "kernel.cu"])
    assert result.returncode == 126 and reason in result.log
    cache = BuildCache(tmp_path / "cache")
    with pytest.raises(BuildFailed) as info:
        cache.get_or_build(build_key(**KEY_PARTS), "void k() {}",
                           lambda source, code: run_command([str(compiler), str(source)]))
    error = compile_error("nvcc", [], info.value, "k", targets.get("sm_90a"), [])
    assert isinstance(error, KernelError)
    assert "exit 126" in str(error) and reason in str(error)
