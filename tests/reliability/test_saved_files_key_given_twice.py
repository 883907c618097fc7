"""A file leviathan (or transformers) writes that gives a key twice is refused, not read with JSON's last-key-wins
(issue 30 round 29, the readers round 28's ``json_text.no_repeats`` did not reach): a generation_config.json giving
``eos_token_id`` twice (``load_adopted``, W111; ``LeviathanForCausalLM.from_pretrained``, W495), a sweep's grid.json
(``read_sweep_grid``, W696), a prepared folder's meta.json (``read_meta``, W706), a shard index's ``weight_map``
(W723), a .jsonl source given to ``prepare`` whose record gives its text field twice (W439: a user's file, so the line
is named), and a metrics.jsonl line giving ``step`` twice, which train's resume kept in its rewrite (W383): it is now
dropped and named as the resume drops every damaged line, the file as it was kept aside. The same readers' siblings
that refuse a file they cannot read: an output marker, a tokenizer record, run.json, summary.json, analysis.json, an
embeddings record and bench's cache record.
"""

from __future__ import annotations

import json
import shutil

import pytest

from leviathan.errors import UserError

from test_adopted_load_failures_in_one_line import saves  # noqa: F401 - the module's saves, as a fixture here
from test_adopted_save_files_held_to_the_save import INDEX

pytestmark = [pytest.mark.reliability]

TWICE = "appears twice, of which JSON would keep only the last"


def given_twice(path, key: str, first) -> None:
    """Rewrite the JSON object in ``path`` with ``key`` given first as ``first``, then as it was."""
    text = path.read_text().lstrip()
    assert text.startswith("{") and f'"{key}"' in text
    path.write_text("{" + json.dumps(key) + ": " + json.dumps(first) + ", " + text[1:])


@pytest.mark.parametrize("name, key, first", [("whole", "eos_token_id", 2), ("native", "use_cache", False)])
def test_generation_config_giving_a_key_twice(saves, tmp_path, name, key, first):  # noqa: F811 - imported above
    from leviathan.hf import LeviathanForCausalLM, load_adopted

    folder = shutil.copytree(saves / name, tmp_path / name)
    given_twice(folder / "generation_config.json", key, first)
    load = load_adopted if name == "whole" else LeviathanForCausalLM.from_pretrained  # W111, W495
    with pytest.raises(UserError, match=rf"generation_config\.json' does not read as a generation config \(key "
                                        rf"'{key}' {TWICE}\)"):
        load(folder)


def test_shard_index_giving_a_weight_twice(saves, tmp_path):  # noqa: F811 - W723
    from leviathan.hf import load_adopted

    folder = shutil.copytree(saves / "sharded", tmp_path / "sharded")
    content = json.loads((folder / INDEX).read_text())
    name, shard = next(iter(content["weight_map"].items()))
    text = json.dumps(content)
    (folder / INDEX).write_text(text.replace('"weight_map": {', f'"weight_map": {{"{name}": "{shard}", ', 1))
    with pytest.raises(UserError, match=rf"does not read as a shard index \(key '{name}' {TWICE}\)"):
        load_adopted(folder)


def test_grid_json_giving_a_key_twice(tmp_path):  # W696
    from leviathan.experiments.machinery.sweep_grid import read_sweep_grid

    (tmp_path / "grid.json").write_text('{"name": "g2"}')
    assert read_sweep_grid(tmp_path).name == "g2"
    given_twice(tmp_path / "grid.json", "name", "x")
    with pytest.raises(UserError, match=rf"grid\.json is not a sweep's grid\.json \(key 'name' {TWICE}\)"):
        read_sweep_grid(tmp_path)


def test_meta_json_giving_a_key_twice(data, tmp_path):  # W706
    from leviathan.data.meta import read_meta

    folder = tmp_path / "d"
    folder.mkdir()
    shutil.copy(data / "meta.json", folder / "meta.json")
    assert read_meta(folder).vocab_size == 300
    given_twice(folder / "meta.json", "vocab_size", 300)  # the same value: only the rule is broken
    with pytest.raises(UserError, match=rf"meta\.json is not valid JSON \(key 'vocab_size' {TWICE}\)"):
        read_meta(folder)


def test_prepare_source_giving_the_text_twice(tmp_path):  # W439
    from leviathan.data.prepare import prepare

    source = tmp_path / "docs.jsonl"
    lines = [json.dumps({"text": f"document {i} " * 20, "meta": {"text": 1}}) for i in range(40)]
    lines[3] = '{"text": "first", "text": "second"}'
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match=r"docs\.jsonl line 4: field 'text' is given twice in one record, of which "
                                        r"JSON would keep only the last text; keep one 'text' per line"):
        prepare(str(source), tmp_path / "out", tokenizer="bpe:280", progress=False, log=lambda msg: None)
    assert not (tmp_path / "out").exists()
    lines[3] = '{"text": "first", "lang": "en", "lang": "fr"}'  # a field prepare does not read: as before
    source.write_text("\n".join(lines) + "\n")
    prepare(str(source), tmp_path / "out", tokenizer="bpe:280", progress=False, log=lambda msg: None)


def test_resume_drops_a_metrics_line_giving_a_key_twice(tmp_path, capsys):  # W383
    from leviathan.train.metrics import MetricsLogger, read_metric_rows

    rows = ['{"step": 1, "tokens": 10, "train_loss": 3.0, "lr": 0.001}',
            '{"step": 2, "step": 4, "tokens": 20, "train_loss": 3.0, "lr": 0.001}',
            '{"step": 4, "tokens": 40, "val_loss": 3.0, "split": "val"}']
    (tmp_path / "metrics.jsonl").write_text("".join(row + "\n" for row in rows))
    MetricsLogger(tmp_path, resume_step=4, tensorboard=False).close()
    said = capsys.readouterr().err
    assert "metrics.jsonl:2: line 2 gives the key 'step' twice, of which JSON would keep only the last; skipped, " \
           "dropped from the file on this resume" in said
    assert (tmp_path / "metrics.jsonl").read_text() == rows[0] + "\n" + rows[2] + "\n"
    kept = [path for path in tmp_path.iterdir() if path.name != "metrics.jsonl"]
    assert len(kept) == 1 and kept[0].read_text() == "".join(row + "\n" for row in rows)  # the file as it was
    assert [row.step for row in read_metric_rows(tmp_path)] == [1, 4]


def test_a_torn_last_line_is_still_dropped_quietly(tmp_path, capsys):
    from leviathan.train.metrics import MetricsLogger

    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "tokens": 10, "train_loss": 3.0, "lr": 0.001}\n{"step": 2, "to')
    MetricsLogger(tmp_path, resume_step=4, tensorboard=False).close()
    assert capsys.readouterr().err == ""
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.jsonl"]


def test_marker_and_tokenizer_record_giving_a_key_twice(data, tmp_path):
    from leviathan import ownership
    from leviathan.data.tokenizer import load_tokenizer

    folder = tmp_path / "o"
    folder.mkdir()
    ownership.write_marker(folder, "train")
    given_twice(folder / ownership.MARKER, "verb", "sweep")
    with pytest.raises(UserError, match=rf"leviathan_output\.json' is not readable JSON \(key 'verb' {TWICE}\)"):
        ownership.read_marker(folder)
    tok = shutil.copytree(data, tmp_path / "d", ignore=shutil.ignore_patterns("*.bin", "*.npy"))
    given_twice(tok / "leviathan_tokenizer.json", "vocab_size", 300)
    with pytest.raises(UserError, match=rf"leviathan_tokenizer\.json is not valid JSON \(key 'vocab_size' {TWICE}\)"):
        load_tokenizer(tok)


def _read_identity(folder):
    from leviathan.run_identity import read_identity

    return read_identity(folder)


def _read_summary(folder):
    from leviathan.train.summary import TrainSummary

    return TrainSummary.read(folder / "summary.json")


def _read_analysis(folder):
    from leviathan.experiments.report.analysis import Analysis

    return Analysis.read_file(folder, "analysis.json")


def _read_embeddings(folder):
    from leviathan.experiments.machinery.embedding_files import read_record

    return read_record(folder / "e.json")


def _read_bench_cache(folder):
    from leviathan.bench.data import _cached

    return _cached(folder, "bpe:300", 300)


@pytest.mark.parametrize(("name", "text", "read"), [
    ("run.json", '{"format": 1, "run_id": "%s", "run_id": "%s"}' % ("a" * 32, "b" * 32), _read_identity),
    ("summary.json", '{"steps": 4, "steps": 5}', _read_summary),
    ("analysis.json", '{"runs": [], "runs": []}', _read_analysis),
    ("e.json", '{"format": 1, "format": 1}', _read_embeddings),
    ("bench_cache.json", '{"files": {}, "files": {}}', _read_bench_cache),
])
def test_other_readers_of_leviathans_files(tmp_path, name, text, read):
    (tmp_path / name).write_text(text)
    with pytest.raises((UserError, ValueError), match=rf"key '[a-z_]+' {TWICE}"):
        read(tmp_path)
