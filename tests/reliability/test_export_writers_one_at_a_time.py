"""Writers of one export folder through the Python API (``bake_adopted``, ``to_plain_llama``, ``to_hf``) take its lock,
and a killed one's temporary folder is known by its process id and removed by the next (issue 30 round 24): two
``bake_adopted`` (W545) or ``to_plain_llama`` (W546) into one new folder at once both returned, one export replaced
by the other without ``overwrite=True``; a killed run left ``.OUT.tmp-XXXXXXXX`` (its name without a process id) hidden
beside the rerun's export for good, a whole-looking model for ``to_plain_llama`` (W537, W539).
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

TEMP_MARK = ".tmp-"  # .OUT.tmp-PID-XXXXXXXX (hf.export.TEMP_MARK)

# a writer that stops just before renaming its finished temporary folder into place (marker file: it is there)
WRITER = textwrap.dedent("""
    import sys, time
    import transformers
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf import adopt, bake_adopted, export
    kind, out, marker = sys.argv[1:4]

    def hang(tmp, out):
        open(marker, "w").close()
        time.sleep(600)

    export._put_in_place = hang
    if kind == "bake":
        bake_adopted(adopt(transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64,
                                                    num_hidden_layers=1, num_attention_heads=4),
                           seed_dim=8, modes=2, knots=8, rank=4), out)
    else:
        export.to_plain_llama(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                                   num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                                   generator_knots=8, generator_rank=4)), out)
""")


def _write(kind: str, out):
    from leviathan import CausalLM, ModelConfig
    from leviathan.hf import adopt, bake_adopted
    from leviathan.hf.export import to_plain_llama

    if kind == "bake":
        config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                          num_attention_heads=4)
        return bake_adopted(adopt(config, seed_dim=8, modes=2, knots=8, rank=4), out)
    return to_plain_llama(CausalLM(ModelConfig(vocab_size=300, hidden_size=32, num_hidden_layers=1,
                                               num_attention_heads=4, generator_seed_dim=8, generator_modes=2,
                                               generator_knots=8, generator_rank=4)), out)


def test_a_second_writer_is_refused_and_a_killed_ones_leftover_removed(tmp_path, kind="plain"):
    """W546, W539 with real processes: the first writer killed inside its write, after the second was refused."""
    out, marker = tmp_path / "out", tmp_path / "writing"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src")}
    first = subprocess.Popen([sys.executable, "-c", WRITER, kind, str(out), str(marker)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(marker.exists, first, "the first writer's finished temporary folder")
        with pytest.raises(UserError, match=rf"cannot export into .*out'.*process {first.pid} .*is writing there"):
            _write(kind, out)  # W545, W546: the second writer, while the first holds the folder
        leftover = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out" + TEMP_MARK)]
        assert leftover and all(name.startswith(f".out{TEMP_MARK}{first.pid}-") for name in leftover)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert (tmp_path / leftover[0] / "config.json").is_file()  # W537, W539: the killed run's whole-looking model
    _write(kind, out)  # the rerun: its export in place, the killed run's folder gone
    assert (out / "config.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "writing"]


HOLDER = textwrap.dedent("""
    import sys, time
    from leviathan.locking import folder_lock
    with folder_lock(sys.argv[1], "export", beside=True):
        open(sys.argv[2], "w").close()
        time.sleep(600)
""")


@pytest.mark.parametrize("kind", ["bake", "plain"])
def test_each_writer_takes_the_lock_and_clears_a_dead_ones_folder(tmp_path, capsys, kind):
    """W545 (bake_adopted), W546: refused while another process holds the folder's lock; W537: a dead export's
    temporary folder (its process id in the name) is removed by the next, an older unnamed one named on stderr."""
    out, marker = tmp_path / "out", tmp_path / "holding"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(marker)], env=env)
    try:
        wait_for(marker.exists, holder, "the other writer's lock")
        with pytest.raises(UserError, match=rf"cannot export into .*process {holder.pid} .*is writing there"):
            _write(kind, out)
    finally:
        holder.kill()
        holder.wait()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed = tmp_path / f".out{TEMP_MARK}{dead.pid}-abcd1234"
    killed.mkdir()
    (killed / "config.json").write_text("{}")
    older = tmp_path / f".out{TEMP_MARK}k9x2_1ab"  # an export's name before the process id: named, not deleted
    older.mkdir()
    (older / "config.json").write_text("{}")
    _write(kind, out)
    assert (out / "config.json").is_file() and not killed.exists() and older.is_dir()
    assert f"{str(older)!r} is left from an export into {str(out)!r} that did not finish" in capsys.readouterr().err


def test_save_pretrained_clears_a_dead_saves_folder(tmp_path, capsys):
    """The same kind inside ``save_pretrained``'s folder (round 24, W539's sibling): a dead save's hidden
    ``.save_pretrained.tmp-PID-*`` (weights and all) is removed by the next save; one of an older name is named."""
    from leviathan.hf import adopt

    out = tmp_path / "saved"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed, older = out / f".save_pretrained.tmp-{dead.pid}-abcd1234", out / ".save_pretrained.tmp-k9x2_1ab"
    for folder in (killed, older):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"weights of a save that was killed")
    config = transformers.LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=4)
    adopt(config, seed_dim=8, modes=2, knots=8, rank=4).save_pretrained(out)
    assert not killed.exists() and older.is_dir() and (out / "model.safetensors").is_file()
    assert f"{str(older)!r} is left from a save_pretrained into" in capsys.readouterr().err
