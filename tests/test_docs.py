"""The README is the front door: every setting and command must be documented there."""

from pathlib import Path

from vask_server.cli import COMMANDS
from vask_server.config import SETTINGS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")


def test_every_setting_is_in_the_readme_with_env_var_flag_and_default():
    for spec in SETTINGS:
        rows = [line for line in README.splitlines() if f"`{spec.env}`" in line and f"`{spec.flag}`" in line]
        assert rows, f"README has no settings row for {spec.env} / {spec.flag}"
        default = "(none)" if spec.default is None else str(spec.default)
        assert default in rows[0], f"README row for {spec.env} does not give the default {default}"


def test_every_command_is_in_the_readme():
    for command in COMMANDS:
        assert f"`vask {command}" in README, f"README does not document `vask {command}`"


def test_readme_names_the_two_setup_commands():
    assert "scripts/demo" in README and "scripts/test" in README
