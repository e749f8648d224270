"""Repository cards: built from a real snapshot and from a cards file, cached, counted, in provenance."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from label_testdata import ROWS, write_jsonl
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.label.cards import (
    PACKAGED_CARDS,
    CardStore,
    RepoCard,
    card_from_folder,
    card_from_git,
    read_cards_file,
    readme_description,
)

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "swetrain" / "tasks" / "builtin" / "repos"


def test_card_from_a_builtin_snapshot_folder() -> None:
    card = card_from_folder(BUILTIN / "cartwise", "swetrain-builtin/cartwise")
    assert card.repo == "swetrain-builtin/cartwise"
    assert card.description.startswith("cartwise An e-commerce shopping cart")
    assert card.package["name"] == "cartwise" and "discounts" in card.package["summary"]
    assert card.language == "python"
    assert "cartwise/" in card.layout and "tests/" in card.layout and "README.md" in card.layout
    assert card.source.startswith("folder:") and card.source.endswith("cartwise")
    assert len(card.sha256()) == 16 and card.sha256() == RepoCard.from_dict(card.to_dict()).sha256()
    assert "shopping cart" in card.text() and "layout:" in card.text()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_card_from_a_git_snapshot_reads_the_commit_not_the_work_tree(tmp_path) -> None:
    repo = tmp_path / "snap"
    repo.mkdir()
    (repo / "README.md").write_text("# tinyweb\n\n[![ci](https://x/badge.svg)](https://x)\n\nA tiny HTTP server framework with routing.\n\n"
                                    "## Installation\n\npip install tinyweb\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "tinyweb"\ndescription = "tiny web framework"\n'
                                         'keywords = ["http", "server"]\ndependencies = ["jinja2>=3", "click"]\n')
    (repo / "tinyweb").mkdir()
    (repo / "tinyweb" / "app.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    commit = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("# changed later\n\nSomething else entirely.\n")
    card = card_from_git(repo, commit, "acme/tinyweb")
    assert card.description == "tinyweb A tiny HTTP server framework with routing."  # badge and install section dropped
    assert card.package["keywords"] == ["http", "server"] and card.dependencies == ("jinja2", "click")
    assert card.layout == ("README.md", "pyproject.toml", "tinyweb/") and card.language == "python"
    assert card.source.endswith(f"@{commit[:12]}")
    # the store builds it from the row's snapshot (source + base_commit), once per repository and commit
    store = CardStore(base_dir=tmp_path)
    rows = [{"instance_id": f"i{k}", "repo": "acme/tinyweb", "source": "snap", "base_commit": commit, "problem_statement": "x"} for k in range(3)]
    out = store.attach(rows)
    assert all(r["repo_card"]["description"] == card.description for r in out)
    assert len(store._cache) == 1 and store.stats["snapshot"] == 3


def test_readme_description_keeps_the_opening_only() -> None:
    text = ("<p align='center'><img src='logo.png'></p>\n\n# Proj\n\n![badge](https://b)\n\n**Proj** is a *fast* "
            "[package manager](https://x) for C++.\n\n```bash\nproj install\n```\n\nIt resolves versions.\n\n## Usage\n\nRun it.\n")
    assert readme_description(text) == "Proj **Proj** is a *fast* package manager for C++. It resolves versions."


def test_cards_file_store_and_missing_card_count(tmp_path) -> None:
    path = write_jsonl(tmp_path / "cards.jsonl", [
        {"repo": "acme/Calc", "card": "Calc is a tiny calculator library.", "source_path": "README.md", "commit": "a" * 40},
        {"repo": "acme/empty", "card": None, "why": "no README"},
    ])
    table = read_cards_file(path)
    assert table["acme/empty"] is None
    card = table["acme/calc"]
    assert card.description == "Calc is a tiny calculator library." and card.source == f"cards:cards.jsonl:README.md@{'a' * 12}"
    store = CardStore([path])
    out = store.attach([ROWS[0], {**ROWS[1], "repo": "acme/empty"}, ROWS[2], ROWS[3]])
    assert out[0]["repo_card"]["description"].startswith("Calc") and all("repo_card" not in r for r in out[1:])
    assert store.stats == {"cards": 1, "none": 3}
    assert store.summary() == "repository cards: 1 of 4 row(s) have one (cards 1); 3 without a card"
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"card": "no repo"}])
    with pytest.raises(ValueError, match="missing 'repo'"):
        read_cards_file(bad)


def test_packaged_cards_cover_the_corpus_repositories() -> None:
    from swetrain.label.corpus import read_corpus

    table = read_cards_file(PACKAGED_CARDS)
    repos = {r.repo.lower() for r in read_corpus()}
    assert repos == set(table)  # only the corpus's repositories (none of the held-out set's)
    assert sum(c is not None for c in table.values()) >= len(repos) - 4


def test_labels_carry_the_card_hash_and_rows_without_a_card_still_get_labels(taxonomy) -> None:
    from swetrain.label.labeler import FALLBACK_MARK, Labeler

    card = RepoCard(repo="acme/calc", description="Calc is a numerical computing library for arrays.", source="cards:x")
    rows = [{**ROWS[0], "repo_card": card.to_dict()}, ROWS[2]]
    labeler = Labeler("heuristic", taxonomy=taxonomy, use_embeddings=False)
    out = labeler.label_rows(rows)
    assert out[0]["label_provenance"]["repo_card"] == {"source": "cards:x", "sha256": card.sha256()}
    assert out[1]["label_provenance"]["repo_card"] is None and out[1]["labels"]["domain"]["l1"]
    assert labeler.card_counts == {"with_card": 1, "without_card": 1}
    assert FALLBACK_MARK not in out[0]["labels"]["domain"]["rationale"]  # the card is repository metadata
    assert FALLBACK_MARK in out[1]["labels"]["domain"]["rationale"]


def test_label_tasks_cli_reads_cards_and_says_how_many_rows_had_none(tmp_path) -> None:
    cards = write_jsonl(tmp_path / "cards.jsonl", [{"repo": "acme/calc", "card": "A calculator library."}])
    src = write_jsonl(tmp_path / "in.jsonl", ROWS)
    out = tmp_path / "o.jsonl"
    res = CliRunner().invoke(app, ["label", "tasks", str(src), "--no-embed", "--repo-cards", str(cards), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "repository cards: 1 of 4 row(s) have one (cards 1); 3 without a card" in res.output
    assert "labeled 4 row(s)" in res.output and "3 without a repository card" in res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0]["label_provenance"]["repo_card"]["sha256"] == read_cards_file(cards)["acme/calc"].sha256()
    assert "repo_card" not in rows[0]  # the card itself is not copied into the output
    none = CliRunner().invoke(app, ["label", "tasks", str(src), "--no-embed", "--no-cards", "--out", str(out)])
    assert none.exit_code == 0 and "4 without a repository card" in none.output


def test_card_model_predicts_a_family_it_never_saw_from_its_channels() -> None:
    """The Domain card model shares one weight per channel across families, so a family without training rows is found."""
    from swetrain.label.learn import CARD_CHANNELS, CardDomainModel

    classes = ["data_science", "web_backend", "media_graphics"]
    names = ["card.has"] + [f"{ch}.{c}" for ch in CARD_CHANNELS for c in classes]
    rng = np.random.default_rng(0)
    x, y = [], []
    for i in range(60):
        k = i % 2  # only data_science and web_backend in training
        v = rng.normal(0.3, 0.05, size=len(names))
        v[0] = 1.0
        for j, _ in enumerate(CARD_CHANNELS):
            v[1 + j * 3 + k] += 0.3
        x.append(v)
        y.append(classes[k])
    model = CardDomainModel.fit(np.array(x), y, names, classes)
    test = rng.normal(0.3, 0.05, size=len(names))
    test[0] = 1.0
    for j, _ in enumerate(CARD_CHANNELS):
        test[1 + j * 3 + 2] += 0.3
    p = model.proba(test[None, :])[0]
    assert classes[int(p.argmax())] == "media_graphics"
    assert CardDomainModel.fit(np.array(x), y, names[:-1], classes) is None  # no card columns for a family: no card model


def test_llm_compact_prompt_has_the_card_and_no_worked_example(taxonomy, tmp_path) -> None:
    from swetrain.label.adapters import from_issue_change
    from swetrain.label.llm import LLMBackend
    from swetrain.label.offline import Stage1

    card = RepoCard(repo="acme/calc", description="Calc is a numerical computing library.", dependencies=("numpy",))
    ev = from_issue_change({**ROWS[0], "repo_card": card.to_dict()})
    backend = LLMBackend(taxonomy, base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path, prompt="compact")
    s1 = Stage1(task_type_l1="bug-fix", domain_l1="data_science", code_language="python", task_spec_type="specific",
                dependency_context="codebase", task_type_rationale="", domain_rationale="")
    for msgs in (backend.stage1_messages(ev), backend.stage2_messages(ev, s1)):
        assert [m["role"] for m in msgs] == ["system", "user"]  # no example exchange a small model could copy
        assert "Calc is a numerical computing library." in msgs[1]["content"] and "numpy" in msgs[1]["content"]
    full = LLMBackend(taxonomy, base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert "Repository card (from the repository itself): Calc is a numerical" in full.stage1_messages(ev)[1]["content"]


def test_eval_cv_reports_with_and_without_cards(tmp_path, taxonomy, monkeypatch) -> None:
    import swetrain.label.cli_eval as cli_eval
    from test_learn import StubFeaturizer, _rows

    rows = _rows()
    cards = write_jsonl(tmp_path / "cards.jsonl", [{"repo": f"org/repo{i}", "card": f"Project {i} is a library."} for i in range(6)])
    monkeypatch.setattr(cli_eval, "_load", lambda corpus, data_dir: rows)
    monkeypatch.setattr(cli_eval, "_featurizer", lambda: StubFeaturizer(taxonomy))
    res = CliRunner().invoke(app, ["label", "eval", "--cv", "--folds", "3", "--repo-cards", str(cards), "--out-dir", str(tmp_path / "cv")])
    assert res.exit_code == 0, res.output
    assert "cv with repository cards: 18 of 36 rows have a card, 18 without" in res.output
    assert "cv without repository cards: 0 of 36 rows have a card, 36 without" in res.output
    assert "with cards" in res.output and "per-class recall" in res.output and "confusion route" in res.output
    with_cards = json.loads((tmp_path / "cv" / "cv_metrics_with_cards.json").read_text())
    assert with_cards["cv"]["rows_with_card"] == 18 and set(with_cards["per_class_recall"]) == {"task_type.l1", "domain.l1", "route"}
    assert (tmp_path / "cv" / "cv_predictions_without_cards.jsonl").exists()
    preds = [json.loads(x) for x in (tmp_path / "cv" / "cv_predictions_with_cards.jsonl").read_text().splitlines()]
    assert sum(p["label_provenance"]["repo_card"] is not None for p in preds) == 18
