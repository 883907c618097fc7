"""Two processes saving into one folder at once: the second is refused, naming the first (issue 30 round 25):
``adopt(...).save_pretrained`` (Y499), ``LeviathanForCausalLM.save_pretrained`` (Y500) and ``write_report`` (Y505)
into one folder from two processes both said done, one save replaced by the other without a word. They now hold the
folder's lock while they write, as the export writers do since round 24 (W545, W546): the second is refused at once
rather than waiting to replace the first's files the moment they are made.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

transformers = pytest.importorskip("transformers")

from reliability_support import REPO, wait_for  # noqa: E402

from leviathan.errors import UserError  # noqa: E402

# a saver that stops once its files are written, before they are published and put in place (marker file: it is
# there); not inside the swap itself, whose flock of the folder a second save without the lock waits for
SAVER = textwrap.dedent("""
    import sys, time
    import transformers
    from leviathan import io
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt
    kind, out, marker = sys.argv[1:4]

    def hang(tmp):
        open(marker, "w").close()
        time.sleep(600)

    io.publish = hang
    if kind == "adopted":
        model = adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=1, num_attention_heads=4),
                      seed_dim=8, modes=2, knots=8, rank=4)
    else:
        model = LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                     num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                                     generator_knots=8, generator_rank=4))
    model.save_pretrained(out)
""")


def _model(kind: str):
    from leviathan.hf import LeviathanConfig, LeviathanForCausalLM, adopt

    if kind == "adopted":
        return adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=1, num_attention_heads=4),
                     seed_dim=8, modes=2, knots=8, rank=4)
    return LeviathanForCausalLM(LeviathanConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                                generator_knots=8, generator_rank=4))


@pytest.mark.parametrize("kind", ["adopted", "leviathan"])
def test_a_second_save_pretrained_into_one_folder_is_refused(tmp_path, kind):
    """Y499 (adopted), Y500 (LeviathanForCausalLM): two real processes; the first killed inside its save, after the
    second was refused; the next save then saves whole, the killed one's temporary folder removed."""
    out, marker = tmp_path / "saved", tmp_path / "saving"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    first = subprocess.Popen([sys.executable, "-c", SAVER, kind, str(out), str(marker)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    model = _model(kind)
    try:
        wait_for(marker.exists, first, "the first save's files, just before they are put in place")
        with pytest.raises(UserError, match=rf"cannot save_pretrained into .*saved'.*process {first.pid} .*is "
                                            r"writing there .*or save into another folder"):
            model.save_pretrained(out)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    model.save_pretrained(out)  # the lock the killed save held is free: saved whole, its leftover removed
    record = ["leviathan_save.json"] if kind == "leviathan" else []  # a native save's record (save_record)
    assert sorted(p.name for p in out.iterdir()) == sorted(["config.json", "generation_config.json",
                                                            "model.safetensors", *record])


# a report writer that stops just before its staged files replace the folder's (marker file: it is there)
REPORTER = textwrap.dedent("""
    import sys, time
    from leviathan.experiments import staged
    from leviathan.experiments.report import write_report
    results, out, marker = sys.argv[1:4]

    def hang(*args):
        open(marker, "w").close()
        time.sleep(600)

    staged._swap = hang
    write_report(results, out, num_bootstrap=5)
""")


@pytest.fixture(scope="module")
def swept(data, tmp_path_factory):
    from reliability_support import one_run_grid, swept_grid

    root = tmp_path_factory.mktemp("one-report-at-a-time")
    return swept_grid(one_run_grid(data, root), root)


def test_a_second_report_into_one_folder_is_refused(tmp_path, swept):
    """Y505: two real processes; the first killed inside its write, after the second was refused; the next report
    then writes whole."""
    from leviathan.experiments.report import write_report

    out, marker = tmp_path / "rr", tmp_path / "reporting"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    first = subprocess.Popen([sys.executable, "-c", REPORTER, str(swept), str(out), str(marker)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(marker.exists, first, "the first report's files, just before they are put in place")
        with pytest.raises(UserError, match=rf"cannot write a report into .*rr'.*process {first.pid} .*is writing "
                                            r"there .*or choose another --out"):
            write_report(swept, out, num_bootstrap=5)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert write_report(swept, out, num_bootstrap=5) == out / "report.md"
    assert (out / "analysis.json").is_file() and not (out / ".lock").exists()
