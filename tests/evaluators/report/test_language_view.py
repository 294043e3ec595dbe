"""The per-language view, model names and facts, readable error tables: pure table builders."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.report import html, markdown, views
from evaluators.report.records import Record


def record(evaluator, model, entries, rev="r1", facts=None, split="test"):
    data = {
        "evaluator": evaluator,
        "dataset": {"id": f"ds-{evaluator}", "revision": "d" * 12, "version": "1.0.0"},
        "model": {"id": model, "revision": rev, "spec": model},
        "scores": {split: entries},
        "signature": f"{evaluator}|k:1",
        "main_score": None,
    }
    if facts is not None:
        data["model_facts"] = facts
    return Record(
        Path(f"/r/{evaluator}-{model}-{rev}.json"), f"{evaluator}-{model}-{rev}.json", data
    )


def bucc(model, scores, **kw):
    """A bucc result: one test entry per language pair, ``bucc_f1`` its per-language score."""
    return record(
        "bucc",
        model,
        [{"subset": s, "main_score": v, "bucc_f1": v} for s, v in scores.items()],
        **kw,
    )


def words(model, by_layer):
    """A word-retrieval result: per-layer entries of one pair (the best layer is the language's)."""
    entries = [
        {"subset": "eng_Latn-deu_Latn", "layer": layer, "main_score": v}
        for layer, v in by_layer.items()
    ]
    return record("word-retrieval", model, entries)


def tacc(model, macro, perturbation):
    entries = [
        {"subset": "eng_Latn-deu_Latn", "lang": "deu_Latn", "group": "macro", "main_score": macro},
        {
            "subset": "eng_Latn-deu_Latn",
            "group": "perturbation",
            "key": "PN",
            "main_score": perturbation,
        },
        {"subset": "all", "lang": "all", "group": "macro", "main_score": 0.99},
    ]
    return record("tacc", model, entries)


def test_language_of_names_a_pair_in_either_direction_and_refuses_non_languages():
    assert views.language_of("eng_Latn-deu_Latn") == views.language_of("deu_Latn-eng_Latn/test")
    assert views.language_of("deu_Latn-eng_Latn")[1] == "German–English"
    assert views.language_of("fra_Latn") == ("fra_Latn", "French")
    for other in ("all", "eng-deu", "eng_Latn-deu_Latn.layer2", "a-b-c"):
        assert views.language_of(other) is None


def test_each_evaluator_gives_its_metadata_s_per_language_score():
    recs = [
        words("A", {0: 0.2, 1: 0.7, 2: 0.5}),  # best layer, as the main score takes it
        tacc("A", 0.6, 0.1),  # the macro entry only; "all" is no language
        bucc("A", {"deu_Latn-eng_Latn": 0.4, "fra_Latn-eng_Latn": 0.8}),
        record(  # the best F1 over layers and methods, as its main score
            "embedding-aligner",
            "A",
            [
                {"subset": "eng_Latn-spa_Latn", "layer": layer, "method": method, "f1": f1}
                for layer, method, f1 in (
                    (0, "argmax", 0.5),
                    (1, "argmax", 0.6),
                    (1, "itermax", 0.9),
                )
            ],
        ),
    ]
    got = {(lang, t.split("|")[0], m): v for (lang, t, m), v in views.language_scores(recs).items()}
    assert got == {
        ("eng_Latn-spa_Latn", "embedding-aligner", "A@r1"): 0.9,
        ("deu_Latn-eng_Latn", "word-retrieval", "A@r1"): 0.7,
        ("deu_Latn-eng_Latn", "tacc", "A@r1"): 0.6,
        ("deu_Latn-eng_Latn", "bucc", "A@r1"): 0.4,
        ("eng_Latn-fra_Latn", "bucc", "A@r1"): 0.8,
    }


def test_language_means_exclude_missing_cells_and_models_are_ranked():
    recs = [
        words("A", {0: 0.6}),
        bucc("A", {"deu_Latn-eng_Latn": 0.2, "fra_Latn-eng_Latn": 0.9}),
        words("B", {0: 0.8}),  # B has no bucc result: its German cell is the mean of 1 of 2 tasks
        words("C", {0: 0.1}),
        bucc("C", {"deu_Latn-eng_Latn": 0.1, "fra_Latn-eng_Latn": 0.1}),
    ]
    view = views.language_view(recs)
    assert [name for _, name in view.languages] == ["French–English", "German–English"]
    de, fr = "deu_Latn-eng_Latn", "eng_Latn-fra_Latn"
    assert view.means[(de, "A@r1")] == pytest.approx(0.4)
    assert view.means[(de, "B@r1")] == pytest.approx(0.8) and view.counts[(de, "B@r1")] == (1, 2)
    assert view.means[(fr, "B@r1")] is None and view.counts[(fr, "B@r1")] == (0, 1)
    # the overall mean is over the languages a model has; each language weighs the same
    assert view.overall["A@r1"] == pytest.approx((0.4 + 0.9) / 2)
    assert view.overall["B@r1"] == pytest.approx(0.8)
    assert view.rank == {"B@r1": 1, "A@r1": 2, "C@r1": 3}
    assert view.models == ["B@r1", "A@r1", "C@r1"]
    assert [t.evaluator for t in view.tasks_of(fr)] == ["bucc"]
    page = html.language_tables(view, views.model_infos(recs))
    assert 'title="mean of 1 of 2 tasks"' in page and "missing cells (–) are excluded" in page
    assert '<tr class="rank"><td>rank</td><td data-sort-value="1">1</td>' in page
    md = "\n".join(markdown.languages_section(view, views.model_infos(recs)))
    assert "| language | B | A | C |" in md  # models in rank order
    assert "| French–English | – | 0.900 | 0.100 |" in md  # B's French: missing


def test_no_languages_no_view():
    assert (
        views.language_view([record("embedding-aligner", "A", [{"subset": "all", "f1": 0.5}])])
        is None
    )


def test_short_names_facts_and_hover():
    facts = {"parameters": 117_653_760, "embedding_dim": 384, "layers": 12, "max_tokens": 512}
    recs = [
        bucc(
            "intfloat/multilingual-e5-small",
            {"deu_Latn-eng_Latn": 0.5},
            rev="c007" * 10,
            facts=facts,
        ),
        bucc("x/m", {"deu_Latn-eng_Latn": 0.5}, rev="seed1"),
        bucc("y/m", {"deu_Latn-eng_Latn": 0.5}, rev="seed2", facts={"layers": "12", "x": 1}),
    ]
    infos = views.model_infos(recs)
    e5 = infos["intfloat/multilingual-e5-small@" + ("c007" * 3)]
    assert e5.name == "multilingual-e5-small" and e5.full.startswith(
        "intfloat/multilingual-e5-small@c007c007"
    )
    assert e5.facts == facts
    assert {infos["x/m@seed1"].name, infos["y/m@seed2"].name} == {"m@seed1", "m@seed2"}
    assert infos["y/m@seed2"].facts == {}  # untrusted: a fact that is not a positive int is dropped
    head = html.model_head(e5.label, e5, 1)
    assert "118M parameters · 384-dim · 12 layers · 512 tokens" in head
    assert f'title="{e5.full}"' in head and ">multilingual-e5-small<" in head
    _, models = views.provenance(recs)
    assert [m.facts for m in models if m.id.startswith("intfloat")] == [facts]


def test_suite_rows_get_display_names_and_facts_from_their_results():
    facts = {"embedding_dim": 32, "layers": 2}
    r = bucc("xlbench/random-d32-l2", {"deu_Latn-eng_Latn": 0.5}, rev="seed1", facts=facts)
    summary = {
        "suite": {"name": "s", "version": "1.0.0"},
        "means": "m",
        "families": ["bucc"],
        "datasets": [],
        "entries": [{"id": "bucc:b", "evaluator": "bucc", "dataset": "b"}],
        "models": [
            {
                "model": "random:32:2:1",
                "model_id": "xlbench/random-d32-l2@seed1",
                "scores": {"bucc:b": 0.5},
                "results": {"bucc:b": f"results/{r.rel}"},
                "family_means": {"bucc": 0.5},
                "overall": 0.5,
                "rank": 1,
                "missing": [],
            }
        ],
    }
    out = views.suite_with_models(summary, [r])
    row = out["models"][0]
    assert row["display"] == "random-d32-l2" and row["facts"] == facts
    page = html.suite_leaderboard(out)
    assert "<th>embedding size</th><th>layers</th>" in page
    assert '<td data-sort-value="32">32</td><td data-sort-value="2">2</td>' in page
    from evaluators.suites.summary import summary_markdown

    md = summary_markdown(out)
    assert (
        "| rank | model | parameters | embedding size | layers | max tokens | bucc | overall |"
        in md
    )
    assert "| 1 | random-d32-l2 | – | 32 | 2 | – | 0.5000 | 0.5000 |" in md


def test_error_tables_show_words_and_sentences_not_ids():
    rows = [
        {
            "item_id": "21227:83-92:72-78:src_tgt",
            "subset": "eng_Latn-deu_Latn.layer8",
            "correct": False,
            "score": 0.9,
            "retrieved": "21228:0-4:0-5",
            "tie": False,
            "query_text": "house",
            "query_context": "The <house> is red.",
            "expected_text": "Haus",
            "expected_context": "Das Haus ist rot.",
            "retrieved_text": "Hund",
            "retrieved_context": "Ein Hund.",
        }
    ]
    page = html.errors_table("errors", rows, "errors-0")
    cells = page.split("<tbody>")[1]
    assert "<strong>house</strong>" in cells and "The &lt;house&gt; is red." in cells
    assert "<strong>Haus</strong>" in cells and "<strong>Hund</strong>" in cells
    assert "English→German · layer8" in cells
    # the ids stay on hover, never as the text of a cell
    assert 'title="21227:83-92:72-78:src_tgt"' in cells and ">21227:" not in cells
    old = html.errors_table("errors", [{k: rows[0][k] for k in list(rows[0])[:6]}], "e")
    assert ">21227:83-92:72-78:src_tgt<" in old  # a file without the text columns shows ids
