"""The Python reader applies the manifest's journal exactly as the Rust one does
(crates/results/src/journal.rs): a killed command's directory, a torn last line,
a damaged middle line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

# _results.py alone (numpy and pandas), without the native module.
_spec = importlib.util.spec_from_file_location(
    "flashlab_results_only", Path(__file__).resolve().parents[1] / "flashlab" / "_results.py"
)
_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_results)

WORKLOAD = {"kind": "replay", "trace_path": "t.trace", "format": "flashlab", "requests": 1,
            "loop_mode": "closed_loop", "speed": 1.0, "max_outstanding": 1, "fit": "error"}


def killed_dir(root: Path) -> Path:
    """manifest.json as created (no runs) and the journal of two runs: a finished, b started."""
    root.mkdir()
    (root / "manifest.json").write_text(json.dumps({
        "schema_version": 1, "tool": {"name": "flashlab", "version": "0.1.0", "git_commit": "t"},
        "created_unix_s": 1, "command_line": [], "host": {"hostname": "h", "kernel": "k", "cpus": 1},
        "device": {"name": "sim:x", "kind": "simulated", "clock": "simulated", "size_bytes": 1,
                   "logical_block_bytes": 512, "identity": {}},
        "engine": "simulator", "runs": []}))
    events = [
        {"event": "planned", "run": 0, "name": "a", "dir": "runs/001-a", "workload": WORKLOAD},
        {"event": "planned", "run": 1, "name": "b", "dir": "runs/002-b", "workload": WORKLOAD},
        {"event": "started", "run": 0, "name": "a"},
        {"event": "finished", "run": 0, "name": "a", "status": "complete"},
        {"event": "started", "run": 1, "name": "b"},
    ]
    (root / "manifest.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return root


def test_a_killed_commands_journal_is_applied(tmp_path):
    m = _results.read_manifest(killed_dir(tmp_path / "r"))
    assert [(r["name"], r["status"]) for r in m["runs"]] == [("a", "complete"), ("b", "running")]


def test_a_torn_last_line_is_ignored_with_a_warning(tmp_path):
    root = killed_dir(tmp_path / "r")
    with open(root / "manifest.jsonl", "ab") as f:
        f.write(b'{"event":"finished","run":1,"name":"b","sta')
    with pytest.warns(UserWarning, match="line 6 is torn"):
        m = _results.read_manifest(root)
    assert m["runs"][1]["status"] == "running"


def test_a_damaged_middle_line_names_file_and_line(tmp_path):
    root = killed_dir(tmp_path / "r")
    lines = (root / "manifest.jsonl").read_text().splitlines()
    lines[2] = '{"event":"started","ru'
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"manifest.jsonl line 3: not a journal event"):
        _results.read_manifest(root)
