"""Every ``.py`` path that the package's docstrings and comments name exists: a module that moved
takes its mentions with it. A path is read from the repository's root, the package's folder or the
naming file's own folder; a bare file name must exist somewhere in the repository."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "structperc"
NAMED = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.py)\b")


def _all_files():
    return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
            if ".venv" not in p.parts and "site-packages" not in p.parts}


def _exists(name, source, files):
    if "/" not in name:
        return any(f == name or f.endswith("/" + name) for f in files)
    folders = [ROOT, PACKAGE, source.parent, *source.parents]
    return any((folder / name).is_file() for folder in folders)


def test_every_named_py_path_exists():
    files = _all_files()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in NAMED.findall(line):
                if name in ("setup.py", "conftest.py") or name.startswith("test_"):
                    continue
                if not _exists(name, path, files):
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {name}")
    assert missing == []
