"""kill -9 while a change is written into a note: the note is always whole, the old text or the new, never a
part; the temporary file a killed write leaves is removed by the next write, and the proposal applies then."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vask_server.adapters.atomic import leftover_temporaries
from vask_server.adapters.vault import Vault
from vask_server.config import load_settings
from vask_server.core.proposals import ChangeRequest
from vask_server.services.options import index_options
from vask_server.services.proposals import ProposalService

pytestmark = pytest.mark.reliability

ROOT = Path(__file__).resolve().parents[2]
TRIALS = 20


def child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_between_the_temporary_write_and_the_rename_the_note_is_whole(tmp_path: Path) -> None:
    vault, index = tmp_path / "vault", tmp_path / "index"
    vault.mkdir()
    note = vault / "Plan.md"
    note.write_text("# Plan\n\n" + "The old plan, line by line.\n" * 20_000, encoding="utf-8")
    before = note.read_bytes()
    settings = load_settings(env={}, vault=vault, index_dir=index)
    service = ProposalService(Vault(vault), index, index_options(settings))
    view, _ = service.propose(
        ChangeRequest("edit", "Plan.md", content="# Plan\n\n" + "The new plan.\n" * 30_000), device="default"
    )
    proposal_id = view.proposal.id
    # `vask proposals apply`, stopped where the new text is on disk (written, synced) and the rename is next
    stopped = child(
        f"""
        import os, sys, time
        def held(src, dst):
            print("renaming", flush=True)
            time.sleep(120)
        os.replace = held
        from vask_server.cli.command import main
        main(["proposals", "apply", "{proposal_id}", "--vault", {str(vault)!r}, "--index-dir", {str(index)!r}])
        """
    )
    assert stopped.stdout is not None
    assert stopped.stdout.readline().strip() == "renaming", stopped.stderr.read() if stopped.stderr else ""
    os.kill(stopped.pid, signal.SIGKILL)
    stopped.wait(30)
    assert note.read_bytes() == before  # whole: the old text
    (left,) = leftover_temporaries(note)
    assert left.read_bytes() == view.proposal.after.encode("utf-8")  # the new text was complete, not yet in place
    assert service.get(proposal_id).state == "pending"  # nothing was recorded: it can be applied again

    command = ["proposals", "apply", proposal_id, "--vault", str(vault), "--index-dir", str(index)]
    again = subprocess.run(
        [sys.executable, "-m", "vask_server.cli", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert note.read_bytes() == view.proposal.after.encode("utf-8")
    assert leftover_temporaries(note) == [] and sorted(os.listdir(vault)) == ["Plan.md"]


@pytest.mark.timeout(300)
def test_kill_minus_nine_at_random_moments_of_writing_never_leaves_a_partial_note(tmp_path: Path) -> None:
    """A process writes a large note again and again, each time the other of two texts, through the vault
    adapter's write; it is killed at a random moment, TRIALS times. After each kill the note is exactly
    one of the two texts."""
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "Big.md"
    texts = [("A line of the first text.\n" * 400_000).encode(), ("Second text, other lines.\n" * 380_000).encode()]
    for n, text in enumerate(texts):
        (tmp_path / f"text-{n}").write_bytes(text)
    note.write_bytes(texts[0])
    hashes = {hashlib.sha256(t).hexdigest(): n for n, t in enumerate(texts)}
    rng = random.Random(20261207)
    mid_write = 0
    for trial in range(TRIALS):
        writer = child(
            f"""
            import hashlib, sys
            from pathlib import Path
            from vask_server.adapters.vault import Vault
            root = Path({str(vault)!r})
            texts = [Path({str(tmp_path)!r}, f"text-{{n}}").read_bytes() for n in (0, 1)]
            vault = Vault(root)
            print("started", flush=True)
            while True:
                now = (root / "Big.md").read_bytes()
                other = texts[1] if now == texts[0] else texts[0]
                vault.write_note("Big.md", other, expected=hashlib.sha256(now).hexdigest())
            """
        )
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "started", writer.stderr.read() if writer.stderr else ""
        time.sleep(rng.uniform(0.05, 0.6))
        assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(30)
        digest = hashlib.sha256(note.read_bytes()).hexdigest()
        assert digest in hashes, f"trial {trial}: the note is neither text ({note.stat().st_size} bytes)"
        left = leftover_temporaries(note)
        mid_write += bool(left)
        for path in left:  # (the next write would remove it; here each trial starts clean)
            path.unlink()
    # the kills did land while a temporary file was being written or waited for its rename
    assert mid_write >= 3, f"only {mid_write} of {TRIALS} kills landed mid-write"
    print(f"{mid_write} of {TRIALS} kills landed while a temporary file was written or waited for its rename")
