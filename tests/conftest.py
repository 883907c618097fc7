"""Shared fixtures for the default (fast, CPU) suite.

- Every test starts from the same torch seed (autouse), so numerical margins are reproducible.
- ``shared_dir`` locates the project's shared folder (test vectors, real data): the folder holding the
  data folder that ``leviathan.io.data_root()`` names (``$LEVIATHAN_DATA``, the repository's one
  variable for it), else ``../shared`` beside the repository root. Tests that need it skip with a
  reason when it is absent, so a fresh clone passes the suite without it.
- ``single_thread`` (opt-in, module scope): one intra-op thread, see its docstring.
- ``tiny_model_config`` builds a small, valid ``ModelConfig`` (every variant trains in milliseconds).
- Every test under tests/reliability is marked ``reliability`` (``pytest_collection_modifyitems``); the default run
  leaves that folder to its own command (README, "Run the tests").
- ``script_module`` loads a file of scripts/ as a module (the scripts are not a package).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from leviathan.io import data_root

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir_candidate() -> Path:
    """The folder above the data folder (``$LEVIATHAN_DATA``, ``leviathan.io.data_root``) if one is set, else
    ``<repo root>/../shared`` (whether or not it exists)."""
    data = data_root()
    return (data.parent if data is not None else REPO_ROOT / ".." / "shared").resolve()


def find_shared_dir() -> Path | None:
    """The shared folder, or None when it does not exist."""
    path = shared_dir_candidate()
    return path if path.is_dir() else None


RELIABILITY_DIR = REPO_ROOT / "tests" / "reliability"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Every test under tests/reliability carries the ``reliability`` marker (whether or not its file says so), so
    the default run (pyproject's ``-m 'not slow and not reliability'``) leaves the whole folder to its own command,
    ``python -m pytest -q -m 'reliability and not slow'``. ``tryfirst``: the marker must be on before ``-m`` selects."""
    for item in items:
        if RELIABILITY_DIR in Path(item.fspath).parents:
            item.add_marker(pytest.mark.reliability)


@pytest.fixture(scope="session")
def script_module():
    """``script_module("collect_results.py")``: scripts/NAME loaded as a module, to call its functions in this process
    (a real process of a script that imports torch takes seconds to start; each file keeps one case as a real
    process). Each call loads the file afresh."""
    import importlib.util

    def load(name: str):
        spec = importlib.util.spec_from_file_location(Path(name).stem, REPO_ROOT / "scripts" / name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(autouse=True)
def _seed_everything():
    torch.manual_seed(0)
    yield


@pytest.fixture(autouse=True)
def terminal_signals():
    """SIGINT and SIGHUP as a terminal gives them, whatever the suite inherited: started in the background of a
    script (``.ci/run &``) it inherits SIGINT ignored (POSIX: a non-interactive shell's background commands ignore it),
    under ``nohup`` SIGHUP ignored. Python then installs no KeyboardInterrupt handler, and leviathan rightly leaves an
    ignored SIGINT or SIGHUP alone (``stop_signals``), so tests of Ctrl-C and of a closed terminal could not see them;
    their child processes inherit the ignored disposition too (a SIGINT test's training ran on past its timeout)."""
    import signal

    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
                signal.SIGHUP: signal.signal(signal.SIGHUP, signal.SIG_DFL)}
    yield
    for sig, handler in previous.items():
        signal.signal(sig, handler)


@pytest.fixture(scope="module")
def single_thread():
    """Run a module's tests with one intra-op thread, restoring the setting afterwards.

    On a shared 2-core machine, OpenMP's parallel regions stall whenever another process holds a core:
    an element-wise op on 64k floats was measured at ~15 ms with 2 threads vs ~0.05 ms with 1 (the
    generator's forward on 256 ids: 8-10 s vs 0.3-0.4 s). Results do not depend on it; only time does.
    Opt in with ``pytestmark = pytest.mark.usefixtures("single_thread")``.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def shared_dir() -> Path:
    path = find_shared_dir()
    if path is None:
        pytest.skip(f"shared folder {shared_dir_candidate()} is absent (set LEVIATHAN_DATA to its data/ folder)")
    return path


@pytest.fixture
def testvectors_dir(shared_dir: Path) -> Path:
    path = shared_dir / "testvectors"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the generator test vectors are not available on this machine")
    return path


@pytest.fixture
def tiny_model_config():
    """Factory: ``tiny_model_config(embedding="leviathan", **overrides) -> ModelConfig``."""
    from leviathan.model.config import ModelConfig

    def make(embedding: str = "leviathan", **overrides):
        fields = dict(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      max_position_embeddings=32, embedding=embedding, embedding_rank=8,
                      generator_seed_dim=8, generator_modes=2, generator_knots=6, generator_rank=4)
        fields.update(overrides)
        return ModelConfig(**fields)

    return make
