"""The distribution installs one import package, ``netproof``, and nothing named like the PyPI
packages ``symbolic``, ``verifier``, ``constructions`` or ``proofs`` (issue 18).

The wheel is built from this checkout (``pip wheel --no-build-isolation``: offline, with the
setuptools already installed), read as a zip, then installed into a folder of its own and run
from there, beside stand-ins of the clashing PyPI packages that fail on import. The PyPI
packages themselves cannot be installed offline, so the stand-ins play their part: a top-level
``symbolic`` that raises when imported, as the symbol-file library did for ``netproof list``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CLASHING = ("symbolic", "verifier", "constructions", "proofs")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(REPO),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ],
        cwd=build,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (found,) = out.glob("netproof-*.whl")
    return found


def _packages_in_tree() -> set[str]:
    found = {"netproof"}
    for sub in ("symbolic", "verifier", "constructions", "kernel"):
        for init in (REPO / sub).rglob("__init__.py"):
            found.add(".".join(["netproof", *init.parent.relative_to(REPO).parts]))
    return found


def test_the_wheels_only_top_level_package_is_netproof(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"netproof", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    assert not any(n.split("/")[0] in CLASHING for n in names)
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["netproof"]


def test_the_wheel_holds_every_subpackage_of_the_tree_with_its_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    packaged = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith("/__init__.py")}
    packaged |= {"netproof"} if "netproof/__init__.py" in names else set()
    assert packaged == _packages_in_tree()
    assert {"netproof/py.typed", "netproof/__main__.py", "netproof/symbolic/py.typed"} <= names
    assert any(
        n.startswith("netproof/constructions/machines/") and n.endswith(".json") for n in names
    )


def test_the_wheel_holds_the_license_and_its_metadata_names_it(wheel: Path) -> None:
    zf = zipfile.ZipFile(wheel)
    licenses = [n for n in zf.namelist() if n.endswith("/LICENSE")]
    assert len(licenses) == 1 and ".dist-info/" in licenses[0]
    assert zf.read(licenses[0]) == (REPO / "LICENSE").read_bytes()
    assert b"MIT License" in zf.read(licenses[0])
    metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")))
    head = metadata.decode().split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in head and "License-File: LICENSE" in head


def test_pyproject_the_package_the_wheel_and_the_changelog_state_one_version(
    wheel: Path,
) -> None:
    import netproof

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    stated = config["project"]["version"]
    assert netproof.__version__ == stated
    assert wheel.name.startswith(f"netproof-{stated}-")
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{stated}]" in changelog


def test_pyproject_lists_every_package_folder_of_the_tree() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(config["tool"]["setuptools"]["packages"]) == _packages_in_tree()
    assert config["tool"]["setuptools"]["package-dir"] == {"netproof": "."}
    assert config["project"]["scripts"] == {"netproof": "netproof.verifier.cli:main"}


def test_the_installed_wheel_runs_beside_packages_named_symbolic_verifier_constructions_and_proofs(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    clash = tmp_path / "clash"
    for name in CLASHING:
        (clash / name).mkdir(parents=True)
        (clash / name / "__init__.py").write_text(
            f"raise ImportError('this is PyPI\\'s {name}, not netproof')\n"
        )
    env = {"PYTHONPATH": f"{site}:{clash}", "PATH": "/usr/bin:/bin"}
    probe = "import netproof, sys; print(netproof.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert where.stdout.strip() == str(site / "netproof" / "__init__.py"), where.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "netproof", "list"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (listed.returncode, listed.stderr) == (0, "")
    assert "parity" in listed.stdout and "dyck" in listed.stdout
