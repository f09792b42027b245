"""A cloned repository whose ``.ided.toml`` sets every key of the configuration, untrusted.

The file is committed and cloned as a user would get it; each key holds what a hostile author would
try (``tests/adversarial/hostile_settings.py``: URLs at servers of their choosing, paths outside the
workspace, filters loosened, limits raised, every other key changed from its default). Untrusted, only
the keys the table takes (``taken``/``gated``, and ``narrows`` values that narrow) may reach the
configuration; every other one must be named in ``withheld`` and leave the user's own value in place.
Trusted, every one of them takes effect, which shows the check can fail. Prints one ``[adversarial]``
line (``-s``): keys tried / refused / taken / refused yet in effect.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from daemon.repository_settings import REPOSITORY_SETTINGS, Decision
from tests.adversarial.hostile_settings import check_keys, repository_keys, toml_of
from tests.vcs_support import make_repo


def test_every_key_an_untrusted_repository_sets_is_taken_only_as_the_table_decides(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    keys = repository_keys("http://127.0.0.1:9", 9, clone, tmp_path / "outside", tmp_path / "markers")
    origin = make_repo(tmp_path / "origin", {".ided.toml": toml_of(keys), "app.py": "x = 1\n"})
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, timeout=60)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}

    report = check_keys(clone, keys, env, trusted_check=True)

    print(
        f"[adversarial] repository keys tried {report.tried}, refused {len(report.refused)}, taken "
        f"{len(report.taken)}, refused yet in effect {len(report.refused_but_effective)}; roots refused "
        f"{report.roots_refused}; in effect once trusted {report.taken_when_trusted} of {len(report.refused) - 1}"
    )
    decided_taken = {
        key.replace(".*.", ".python." if key.startswith("intel.") else ".default.")
        for key, rule in REPOSITORY_SETTINGS.items()
        if rule.decision in (Decision.TAKEN, Decision.GATED)
    }
    assert report.tried == len(REPOSITORY_SETTINGS) - 1  # roots.allowed is tried on its own
    assert set(report.taken) == decided_taken  # every narrows key here widens: refused
    assert report.refused_but_effective == []
    assert report.roots_refused
    assert report.taken_when_trusted == len(report.refused) - 1  # all but `workspace`, which ided sets itself
