"""The package as a user installs it: build the wheel, install it (not editable), run the verbs elsewhere.

The wheel is built offline from a copy of the source tree (``pip wheel --no-build-isolation``, with the
setuptools of the running environment) and installed with ``pip install --no-deps --target`` into a
temporary folder. The verbs then run through that install's own ``leviathan`` script, with the folder
first on ``PYTHONPATH`` (torch and the other dependencies come from the running environment, so nothing
is downloaded), from an empty working folder: nothing of the source checkout (``src/``, the tests)
can be found by path. Each command also checks that ``leviathan`` was imported from the install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from test_train import write_corpus

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def _setuptools_ok() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


pytestmark = pytest.mark.skipif(not _setuptools_ok(), reason="building the wheel offline needs setuptools>=77 "
                                                              "in the running environment (--no-build-isolation)")


def _pip(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    done = subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, f"pip {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """Build the wheel from a copy of the tree, install it under ``site/``; returns the paths and the env."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build"))
    _pip("wheel", str(source), "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(root / "dist"),
         cwd=root)
    (wheel,) = (root / "dist").glob("leviathan-*.whl")
    site = root / "site"
    _pip("install", "--no-deps", "--no-index", "-q", "--target", str(site), str(wheel), cwd=root)
    work = root / "work"  # an unrelated folder: no configs/, no src/
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("LEVIATHAN_DATA", None)
    return {"wheel": wheel, "site": site, "work": work, "env": env, "script": site / "bin" / "leviathan"}


def run_all(installed: dict, *commands: tuple[str, ...]) -> list[str]:
    """Run ``leviathan ARGS`` for every command at once (each one pays torch's import); their stdouts."""
    procs = [subprocess.Popen([str(installed["script"]), *args], cwd=installed["work"], env=installed["env"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for args in commands]
    outs = []
    for args, proc in zip(commands, procs):
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        assert proc.returncode == 0, f"leviathan {' '.join(args)} exited {proc.returncode}:\n{out}\n{err}"
        outs.append(out)
    return outs


def test_wheel_ships_the_configs_grids_and_task_templates(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    for name in ("tiny", "cpu-small", "paper-109m"):
        assert f"leviathan/configs/{name}.yaml" in names
    for name in ("cpu", "paper", "smoke", "ablate-bpe8k", "ablate-bpe32k", "ablate-o200k"):
        assert f"leviathan/configs/experiments/{name}.yaml" in names
    for task in ("lambada_openai", "hellaswag", "piqa", "arc_easy", "arc_challenge", "winogrande"):
        assert f"leviathan/eval/tasks/{task}.yaml" in names
    assert "leviathan/eval/tasks/utils.py" in names
    assert "leviathan/verdict.yaml" in names  # what the demo quotes, also from an installed wheel
    # the license, as pyproject names it (an SPDX expression, PEP 639) and its text in the dist-info
    wheel = zipfile.ZipFile(installed["wheel"])
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Apache License" in wheel.read(next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert installed["script"].read_text().splitlines()[0] == f"#!{sys.executable}"


def test_verbs_work_from_an_unrelated_folder(installed):
    work = installed["work"]
    write_corpus(work / "corpus", num_docs=12)
    # the installed copy is the one imported, and it finds its files through the package
    probe = ("import json, leviathan, leviathan.configs as c, leviathan.eval.tasks as h; "
             "from leviathan.verdict import committed_verdict; assert committed_verdict().comparisons; "
             "print(json.dumps([leviathan.__file__, c.packaged_names(c.TRAIN), c.packaged_names(c.GRIDS), "
             "sorted(p.name for p in h.TASK_DIR.glob('*.yaml'))]))")
    python = subprocess.Popen([sys.executable, "-c", probe], cwd=work, env=installed["env"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    help_text, grid, params, _ = run_all(
        installed, ("--help",),
        ("sweep", "--grid", "cpu", "--list"),  # a grid by name, before its data exists: vocab from the grid
        ("params", "--preset", "cpu-small"),
        ("prepare", "corpus", "--out", "data", "--tokenizer", "bpe:300", "--val-fraction", "0.2"))
    out, err = python.communicate(timeout=TIMEOUT)
    assert python.returncode == 0, err
    where, train, grids, tasks = json.loads(out)
    assert Path(where).is_relative_to(installed["site"]), where
    assert {"tiny", "cpu-small", "paper-109m"} <= set(train) and {"cpu", "paper", "smoke"} <= set(grids)
    assert len(tasks) == 6
    for verb in ("prepare", "train", "eval", "sweep", "report", "params", "lm-eval"):
        assert verb in help_text
    assert "grid 'cpu':" in grid and "(vocab 8,192 from grid)" in grid
    assert "m-leviathan-s0" in grid and "xxs-dense_untied-s0" in grid
    assert "leviathan" in params and "dense_tied" in params
    # a packaged train config by name, and by the path a source checkout used to have
    meta = json.loads((work / "data" / "meta.json").read_text())
    by_name, by_old_path = run_all(installed, ("train", "--config", "tiny", "data.path=data", "--print-config"),
                                   ("train", "--config", "configs/tiny.yaml", "data.path=data", "--print-config"))
    cfg = yaml.safe_load(by_name)
    assert cfg["model"]["vocab_size"] == meta["vocab_size"] and cfg["model"]["hidden_size"] == 64
    assert cfg["max_steps"] == 200 and cfg["data"]["path"] == str((work / "data").resolve())
    assert by_old_path == by_name
    assert not (work / "runs").exists()  # --print-config trains nothing
