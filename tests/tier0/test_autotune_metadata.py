"""A measured table's `ktile_commit` names the commit only where the checkout matches it; a
tree with changes to tracked files reads "<commit>+dirty" (a working tree copied over an older
checkout, as on the lent H200, recorded the older commit before)."""
import shutil
import subprocess

import pytest

from ktile.autotune import metadata

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_commit_is_marked_dirty_when_tracked_files_differ(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "ktile" / "autotune").mkdir(parents=True)
    module = root / "ktile" / "autotune" / "metadata.py"
    module.write_text("# a stand-in\n")
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    _git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    monkeypatch.setattr(metadata, "__file__", str(module))
    assert metadata._commit() == head
    module.write_text("# changed\n")
    assert metadata._commit() == head + "+dirty"
