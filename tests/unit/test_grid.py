"""Experiment grids: YAML -> runs (iso-body, isoparametric within 1%, dense ladder), names, overrides."""

import json
import re

import pytest

from leviathan.config import ConfigError
from leviathan.errors import UserError
from leviathan.experiments.machinery.grid import available_grids, find_grid, format_runs, load_grid, match_total
from leviathan.experiments.machinery.grid_file import DataSection, read_grid_file
from leviathan.model.accounting import count_config
from leviathan.model.config import ModelConfig


def small_grid(**changes):
    raw = {
        "name": "t",
        "base": {"max_steps": 3, "data": {"seq_len": 32}},
        "data": {"dir": "/nonexistent/data", "vocab_size": 4096},
        "seeds": [0, 1],
        "sizes": {"a": {"preset": "cpu-tiny", "hidden_size": 32},
                  "b": "cpu-tiny",
                  "c": {"preset": "cpu-tiny", "hidden_size": 96, "run": {"optim": {"lr": 1e-3}}}},
        "experiments": {"iso_body": {"variants": ["dense_tied", "leviathan"], "sizes": ["a", "b"]},
                        "isoparametric": {"variants": ["leviathan"], "sizes": ["b", "c"]},
                        "scaling": {"variant": "dense_untied", "sizes": ["a", "b", "c"], "seeds": [0]}},
    }
    raw.update(changes)
    return raw


def test_expansion_regimes_dedup_and_names():
    g = load_grid(small_grid())
    names = [r.name for r in g.runs]
    assert len(names) == len(set(names))
    assert g.vocab_size == 4096 and g.vocab_from == "grid"
    # iso-body: same backbone, variants differ only in the input side
    for seed in (0, 1):
        for size in ("a", "b"):
            pair = [r for r in g.runs if "iso_body" in r.regimes and r.size == size and r.seed == seed]
            assert {r.variant for r in pair} == {"dense_tied", "leviathan"}
            assert pair[0].params.body == pair[1].params.body
            assert pair[0].num_hidden_layers == pair[1].num_hidden_layers
    # the dense_untied run of size b seed 0 serves both isoparametric and scaling: trained once
    shared = g.run("b-dense_untied-s0")
    assert set(shared.regimes) == {"isoparametric", "scaling"}
    # scaling only for seed 0 (its own seeds list)
    assert [r.seed for r in g.runs if r.regimes == ["scaling"]] == [0]
    # size run-config overrides reach the runs of that size only
    c_runs = [r for r in g.runs if r.size == "c"]
    assert all("optim.lr=0.001" in g.run_overrides(r) for r in c_runs)
    assert all("optim.lr=0.001" not in g.run_overrides(r) for r in g.runs if r.size != "c")
    assert "t" in format_runs(g)


def test_isoparametric_totals_match_within_one_percent():
    g = load_grid(small_grid())
    iso = [r for r in g.runs if "isoparametric" in r.regimes and r.variant == "leviathan"]
    assert len(iso) == 4
    for r in iso:
        base = g.run(f"{r.size}-dense_untied-s{r.seed}")
        assert r.target_total == base.params.total
        assert abs(r.params.total - base.params.total) <= 0.01 * base.params.total
        assert r.num_hidden_layers > base.num_hidden_layers  # the table's budget went into depth
        assert r.params.total == count_config(r.model).total


def test_match_total_trims_ffn_only_when_depth_misses():
    paper = ModelConfig(vocab_size=200_019, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                        embedding="dense_untied")
    cfg, target = match_total(paper, "leviathan")
    assert cfg.intermediate_size is None and abs(count_config(cfg).total - target) < 0.01 * target
    small = ModelConfig(vocab_size=8192, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                        embedding="dense_untied", generator_seed_dim=64, generator_rank=32, generator_knots=16)
    cfg, target = match_total(small, "leviathan")
    assert cfg.intermediate_size is not None
    assert abs(count_config(cfg).total - target) <= 0.001 * target


def test_shipped_grids_load_and_cover_the_paper_regimes():
    assert {"cpu", "paper"} <= set(available_grids())
    for name in ("cpu", "paper"):
        g = load_grid(name)
        regimes = {reg for r in g.runs for reg in r.regimes}
        assert {"iso_body", "isoparametric", "scaling"} <= regimes
        assert len({r.size for r in g.runs if "iso_body" in r.regimes}) >= 3
        assert len({r.size for r in g.runs if "scaling" in r.regimes}) >= 4
        assert len({r.size for r in g.runs if "isoparametric" in r.regimes}) >= 2
        for r in g.runs:
            if r.target_total:
                assert abs(r.params.total - r.target_total) <= 0.01 * r.target_total
    paper = load_grid("paper")
    assert paper.vocab_size == 200_019 and all(r.model.max_position_embeddings == 512 for r in paper.runs)
    assert "data.seq_len=512" in paper.base_overrides
    assert find_grid("cpu").name == "cpu.yaml"
    for name in available_grids():  # every shipped grid expands (smoke included)
        assert load_grid(name).runs


def test_vocab_comes_from_prepared_meta(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"format": 1, "tokenizer": "bpe:300", "vocab_size": 300,
                                                    "dtype": "uint16", "eot_id": 0, "splits": {"train": {}}}))
    g = load_grid(small_grid(), data_dir=str(tmp_path), seeds=[5])
    assert g.vocab_size == 300 and g.vocab_from == "meta.json"
    assert all(r.model.vocab_size == 300 for r in g.runs)
    assert {r.seed for r in g.runs if r.regimes != ["scaling"]} == {5}  # scaling keeps its own seeds list
    overrides = g.run_overrides(g.runs[0])
    assert f"data.path={tmp_path}" in overrides and "seed=5" in overrides


def test_run_overrides_build_a_valid_run_config():
    train_config = pytest.importorskip("leviathan.run_config")
    for name in available_grids():  # every shipped grid's base settings are valid RunConfig keys
        shipped = load_grid(name)
        for r in shipped.runs:
            cfg = train_config.load_run_config(None, shipped.run_overrides(r), check_data=False)
            assert count_config(cfg.model).total == r.params.total
            cfg.grad_accum_steps()  # batch geometry is whole
    g = load_grid(small_grid())
    for r in g.runs:
        cfg = train_config.load_run_config(None, g.run_overrides(r), check_data=False)
        assert cfg.model.embedding == r.variant and cfg.seed == r.seed
        assert cfg.model.num_hidden_layers == r.num_hidden_layers and cfg.model.vocab_size == 4096
        assert count_config(cfg.model).total == r.params.total


@pytest.mark.parametrize("change, match", [
    ({"experiment": {}}, "did you mean 'experiments'"),
    ({"experiments": {"iso_body": {"variants": ["dense"], "sizes": ["a"]}}}, "unknown variant"),
    ({"experiments": {"iso_body": {"variants": ["leviathan"], "sizes": ["zz"]}}}, "unknown size"),
    ({"experiments": {"scaling": {"sizes": ["a", "b"]}}}, "at least 3 sizes"),
    ({"experiments": {"isobody": {}}}, "unknown experiment"),
    ({"sizes": {"a": {"preset": "cpu-tiny", "hiden_size": 3}}}, "hidden_size"),
    ({"data": {"dir": "/nonexistent"}}, "not prepared"),
    ({"variant_run": {"dense": {"optim.lr": 1e-3}}}, "unknown variant"),
    ({"variant_run": {"leviathan": 1e-3}}, "variant_run.leviathan must be a mapping"),
    ({"variant_run": {"zz:leviathan": {"optim.lr": 1e-3}}}, "variant_run.zz:leviathan: unknown size 'zz'"),
    ({"variant_run": {"a:dense": {"optim.lr": 1e-3}}}, "unknown variant 'dense'"),
    ({"eval": {"bucketz": 3}}, "unknown key eval.bucketz in grid 't'; valid: sets, buckets, bucket_method"),
    ({"eval": {"sets": {"w": {"split": "val", "text": "w.txt"}}}}, "eval set 'w' needs exactly one of split: or text:"),
    ({"sizes": {"a": 3}}, "sizes.a: expected a preset name or a mapping of model fields, got 3"),
    ({"sizes": {"a": {"preset": "cpu-tiny", "run": [1]}}}, r"sizes.a.run: expected a mapping of run-config keys"),
    ({"experiments": {"isoparametric": {"variants": ["leviathan"], "sizes": ["b"], "baseline": "dense"}}},
     "experiments.isoparametric: unknown variant 'dense'"),
    # a repeat names one run twice: refused, not silently dropped
    ({"seeds": [0, 1, 0]}, r"seeds: 0 is listed twice; list each once"),
    ({"experiments": {"iso_body": {"variants": ["leviathan"], "sizes": ["a", "a"]}}},
     r"experiments.iso_body.sizes: 'a' is listed twice"),
    ({"experiments": {"iso_body": {"variants": ["leviathan", "leviathan"], "sizes": ["a"]}}},
     r"experiments.iso_body.variants: 'leviathan' is listed twice"),
    ({"experiments": {"iso_body": {"variants": ["leviathan"], "sizes": ["a"], "seeds": [2, 2]}}},
     r"experiments.iso_body.seeds: 2 is listed twice"),
])
def test_bad_grids_name_the_problem(change, match):
    with pytest.raises((ConfigError, UserError), match=match):
        load_grid(small_grid(**change))


def test_variant_run_gives_each_arm_its_own_settings_after_the_size():
    g = load_grid(small_grid(variant_run={"leviathan": {"optim": {"lr": 1e-2}}}))
    lev = [r for r in g.runs if r.variant == "leviathan" and r.size == "c"][0]
    assert lev.run_overrides == ["optim.lr=0.001", "optim.lr=0.01"]  # the variant's wins (applied last)
    assert all("optim.lr=0.01" not in r.run_overrides for r in g.runs if r.variant != "leviathan")


def test_variant_run_of_one_size_and_run_lists_apply_in_order():
    """``SIZE:VARIANT`` settings follow the variant's; a size's ``run`` may be a list of mappings (a merged
    anchor, then its own lr: the width round's pre-sweep sizes)."""
    g = load_grid(small_grid(variant_run={"leviathan": {"optim.lr": 1e-2}, "c:leviathan": {"optim.lr": 3e-3}},
                             sizes={"a": {"preset": "cpu-tiny", "hidden_size": 32},
                                    "b": {"preset": "cpu-tiny", "run": [{"optim.input_lr_mult": 3.0},
                                                                        {"optim": {"lr": 1e-3}}]},
                                    "c": {"preset": "cpu-tiny", "hidden_size": 96}}))
    runs = {(r.size, r.variant, r.seed): r.run_overrides for r in g.runs}
    assert runs[("c", "leviathan", 0)] == ["optim.lr=0.01", "optim.lr=0.003"]
    assert runs[("a", "leviathan", 0)] == ["optim.lr=0.01"] and runs[("c", "dense_untied", 0)] == []
    assert runs[("b", "dense_tied", 1)] == ["optim.input_lr_mult=3.0", "optim.lr=0.001"]


def test_anchors_hold_yaml_anchors_that_sizes_merge(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("""
name: anchored
data: {dir: /nonexistent, vocab_size: 512}
anchors:
  pick: {model: &pick {generator_rank: 8}, run: &pick_run {optim.input_lr_mult: 0.3}}
  body: &body {preset: cpu-tiny, hidden_size: 32}
sizes:
  a: *body
  a-pick: {<<: [*pick, *body], run: *pick_run}
experiments:
  iso_body: {variants: [leviathan], sizes: [a, a-pick]}
""")
    g = load_grid(str(path))
    pick = g.run("a-pick-leviathan-s0")
    assert pick.model.generator_rank == 8 and pick.model.hidden_size == 32
    assert pick.run_overrides == ["optim.input_lr_mult=0.3"] and g.run("a-leviathan-s0").model.generator_rank == 16


def test_unknown_grid_name_lists_available():
    with pytest.raises(UserError, match="available"):
        find_grid("no-such-grid")


def test_the_grid_file_is_read_into_typed_sections():
    """What a section leaves out takes its default; a data folder may be given by name alone."""
    from leviathan.experiments.machinery.grid_file import EvalOptions, GridKeys

    g = load_grid(small_grid(keys={"data_seed": "data.seed"}, data_seed=3,
                  eval={"sets": {"val": "val", "w": {"text": "w.txt", "optional": True}}, "max_tokens": 100}))
    assert g.keys == GridKeys(seed="seed", data_seed="data.seed", data_dir="data.path")
    assert "data.seed=3" in g.run_overrides(g.runs[0])
    assert g.eval_options == EvalOptions(max_tokens=100)  # the rest at their defaults
    assert [(e.name, e.split, e.text, e.optional) for e in g.eval_sets] == [("val", "val", None, False),
                                                                            ("w", None, "w.txt", True)]
    with pytest.raises(UserError, match="data dir '/nonexistent/named' is not prepared"):
        load_grid(small_grid(data="/nonexistent/named"))  # a string is the folder (and has no vocab_size)


def test_shipped_grids_name_a_runnable_prepare_command():
    """The command a grid names when its data folder is not prepared yet is copied into a shell: a
    ``leviathan prepare`` of the grid's own folder, using no variable but ``$LEVIATHAN_DATA``."""
    for name in available_grids():
        gf, _ = read_grid_file(name)
        data = DataSection.of(gf.data)
        if data.prepare is None:
            continue
        assert data.prepare.startswith("leviathan prepare "), (name, data.prepare)
        assert set(re.findall(r"\$\{?(\w+)", data.prepare)) <= {"LEVIATHAN_DATA"}, (name, data.prepare)
        assert re.findall(r"\$[^{A-Z]", data.prepare) == [], (name, data.prepare)
        assert data.prepare.split("--out ")[1].split()[0] == data.dir, (name, data.prepare)


def test_a_command_line_override_a_runs_own_layer_sets_is_refused():
    """Found while fixing issue 30 round 18 (fix19a): the command line's overrides are applied before a size's run
    overrides and ``variant_run``, so ``sweep --grid G optim.lr=1e-3`` left the arm with a tuned lr at its own rate,
    without a word. Refused, naming the layer; a key no layer sets still reaches every run."""
    from leviathan.config import ConfigError
    from leviathan.experiments.machinery.grid import load_grid

    g = {"name": "g", "data": {"dir": "/nonexistent", "vocab_size": 512}, "seeds": [0], "base": {"max_steps": 2},
         "sizes": {"a": {"preset": "cpu-tiny", "hidden_size": 16, "num_attention_heads": 2}},
         "experiments": {"iso_body": {"variants": ["dense_untied", "leviathan"], "sizes": ["a"]}},
         "variant_run": {"leviathan": {"optim.lr": 0.01}}}
    for given in ("optim.lr=0.001", "optim={lr: 0.001}"):
        with pytest.raises(ConfigError, match=r"on the command line sets optim.lr, which variant_run.leviathan sets "
                                              r"for run a-leviathan-s0 after the command line"):
            load_grid(g, overrides=[given])
    grid = load_grid(g, overrides=["optim.weight_decay=0.05"])
    assert all("optim.weight_decay=0.05" in grid.run_overrides(r) for r in grid.runs)


def test_a_grid_vocab_size_apart_from_its_folders_meta_json_is_refused_naming_both(tmp_path):
    """Round 20 (M59): ``data.vocab_size: 299`` beside a data folder prepared with 300 was dropped for meta.json's
    300 without a word; the grid's own folder must agree (a folder given as ``data_dir`` is another preparation)."""
    (tmp_path / "meta.json").write_text(json.dumps({"format": 1, "tokenizer": "bpe:300", "vocab_size": 300,
                                                    "dtype": "uint16", "eot_id": 0, "splits": {"train": {}}}))
    with pytest.raises(UserError, match=r"says data.vocab_size 299, but its data folder .* is prepared with a "
                                        r"vocabulary of 300 \(its meta.json\)"):
        load_grid(small_grid(data={"dir": str(tmp_path), "vocab_size": 299}))
    assert load_grid(small_grid(data={"dir": str(tmp_path), "vocab_size": 300})).vocab_size == 300
    assert load_grid(small_grid(data={"dir": str(tmp_path)})).vocab_size == 300


def test_a_grid_vocab_size_apart_from_its_own_folder_given_as_data_dir_is_refused(tmp_path, monkeypatch):
    """Round 30 (Y688): ``load_grid(g, data_dir=...)`` naming the grid's own data.dir skipped M59's check, as if it
    were another preparation: data.vocab_size 299 beside the folder's 300 was dropped and the runs sized for 300. A
    folder that is another preparation (not the grid's data.dir) still rules with its meta.json."""
    data = tmp_path / "data"
    other = tmp_path / "other"
    for folder in (data, other):
        folder.mkdir()
        (folder / "meta.json").write_text(json.dumps({"format": 1, "tokenizer": "bpe:300", "vocab_size": 300,
                                                      "dtype": "uint16", "eot_id": 0, "splits": {"train": {}}}))
    monkeypatch.chdir(tmp_path)
    for given in (str(data), "data", "./data/"):
        with pytest.raises(UserError, match=r"says data.vocab_size 299, but its data folder .* is prepared with a "
                                            r"vocabulary of 300 \(its meta.json\)"):
            load_grid(small_grid(data={"dir": "data", "vocab_size": 299}), data_dir=given)
    assert load_grid(small_grid(data={"dir": "data", "vocab_size": 299}), data_dir=str(other)).vocab_size == 300
    assert load_grid(small_grid(data={"dir": "data", "vocab_size": 300}), data_dir=str(data)).vocab_size == 300
