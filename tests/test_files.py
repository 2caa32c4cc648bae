"""atomic_write: unique temporary names, rename on success, nothing left on an error."""
import os

import pytest

from structperc.utils.atomic import atomic_write


def test_two_concurrent_writers_have_their_own_temp_files_and_the_last_rename_wins(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_write(target) as first:
        first.write("first\n")
        with atomic_write(target) as second:
            second.write("second\n")
            temps = sorted(p.name for p in tmp_path.iterdir())
            # two distinct temp files beside the target, neither of them the target
            assert len(temps) == 2 and all(name.startswith(".out.txt.") for name in temps)
            assert not target.exists()
        assert target.read_text() == "second\n"
        first.write("more\n")
    assert target.read_text() == "first\nmore\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_concurrent_processes_writing_one_target_each_write_a_whole_file(tmp_path):
    target = tmp_path / "out.txt"
    lines = {"a": "a" * 100_000, "b": "b" * 100_000}
    children = []
    for letter, text in lines.items():
        pid = os.fork()
        if pid == 0:  # child: write the file 20 times
            try:
                for _ in range(20):
                    with atomic_write(target) as handle:
                        for _ in range(10):
                            handle.write(text + "\n")
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        assert os.waitpid(pid, 0)[1] == 0
    content = target.read_text().splitlines()
    assert len(content) == 10 and len(set(content)) == 1 and content[0] in lines.values()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_an_error_inside_leaves_neither_target_nor_temp_file(tmp_path, error):
    target = tmp_path / "out.bin"
    with pytest.raises(error):
        with atomic_write(target, "wb") as handle:
            handle.write(b"half")
            raise error()
    assert list(tmp_path.iterdir()) == []


def test_an_error_leaves_an_existing_target_as_it_was(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as handle:
            handle.write("new\n")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_the_file_gets_the_usual_mode_not_mkstemps_0600(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_write(target) as handle:
        handle.write("x")
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
