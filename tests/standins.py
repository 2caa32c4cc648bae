"""Stand-ins for the shipped named models: the same recipes (names, readers, templates, learning rules,
input columns) over the first sentences of each corpus of the mirror, so that a test or a docs page
builds one in seconds where the real one takes a minute. ``write_standins`` writes the slices as a
mirror of their own and the recipes as a ``$STRUCTPERC_RECIPES`` file, whose recipes replace the shipped
ones of the same name."""
import hashlib
import json
from pathlib import Path

# sentences kept of each file a recipe reads (training files more: the stand-ins must still tag
# "Mary left early." as the docs show it)
SENTENCES = {"train": 3000, "dev": 200, "test": 200}


def slice_corpus(source: Path, target: Path, n_sentences: int) -> None:
    """``n_sentences`` blank-line-separated sentences of ``source``, evenly spaced through it (documents'
    -DOCSTART- lines left out), into ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    blocks = [b for b in source.read_text(encoding="utf-8").split("\n\n") if b.strip() and not b.startswith("-DOCSTART-")]
    step = max(1, len(blocks) // n_sentences)
    target.write_text("\n\n".join(blocks[::step][:n_sentences]) + "\n\n", encoding="utf-8")


def write_standins(mirror: Path, folder: Path, train_sentences: int = SENTENCES["train"]) -> tuple[Path, Path]:
    """(a mirror of the slices, the recipes file) under ``folder``, from the corpora of ``mirror``; fewer
    ``train_sentences`` where a test needs a model, not its tags."""
    sentences = {**SENTENCES, "train": train_sentences}
    from structperc.models.recipes import SHIPPED

    standin_mirror = folder / "standin-mirror"
    recipes = []
    for recipe in SHIPPED:
        record = recipe.record()
        files = {}
        for role in ("train", "dev", "test"):
            name = record[role]
            if name is None:
                continue
            target = standin_mirror / recipe.corpus / name
            if not target.is_file():
                slice_corpus(mirror / recipe.corpus / name, target, sentences[role])
            files[name] = hashlib.sha256(target.read_bytes()).hexdigest()
        # nothing listens on port 9: a stand-in is never downloaded
        entries = [{"path": name, "sha256": sha, "url": f"http://127.0.0.1:9/{recipe.corpus}/{name}"}
                   for name, sha in files.items()]
        record.update(files=files, build_seconds=None,
                      manifest={"corpora": [{"name": recipe.corpus, "format": recipe.format, "files": entries}]})
        recipes.append(record)
    path = folder / "standin-recipes.json"
    path.write_text(json.dumps(recipes), encoding="utf-8")
    return standin_mirror, path
