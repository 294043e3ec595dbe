"""The bad-input matrix (issue 13): every entry point answers bad input with one sentence.

Each row of :data:`CASES` is ``(argv, exit code, words)``: the command is run
in-process through :func:`builders.cli.main` and must exit with that code,
print no traceback, print exactly one ``error:`` line on stderr (argparse's
usage lines aside) containing every one of ``words`` (case-insensitive), and
leave nothing at ``--out`` nor any new file beside it.

Placeholders in ``argv`` are filled from the :func:`world` fixture: ``{tmp}``
(the folder of the inputs), ``{out}`` (a fresh output path per case) and the
names of the files made there (``{latin1}``, ``{dir}``, ``{ds}`` ...).

To adjust the table, edit :data:`CASES`. Every row must pass: there is no
xfail mechanism (a fix that is not merged yet has no row yet).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from builders.cli import main

sys.path.insert(
    0, str(Path(__file__).resolve().parent / "support")
)  # tiny_folders; xl_bad_models for callable: rows
import tiny_folders as tf  # noqa: E402  (four-family folders and folder surgery)

LATIN1 = "caf\xe9 1-1\n".encode("latin-1")
GOOD_CORPUS = "".join(f"{i}\tw{i} x{i} y{i}\tv{i} u{i} t{i}\n" for i in range(6))
GOOD_DICT = "".join(f"w{i} v{i}\nx{i} u{i}\n" for i in range(6))
TEXT = "a b c ||| x y z\nd e ||| u v\n"


B = ["build"]
CBD = [*B, "cbd", "--lang", "eng-deu", "--aligner", "none", "--out", "{out}"]
CBD_OK = [*CBD, "--tsv", "{corpus}", "--dict", "{dict}"]
SILVER = [*B, "silver", "--lang", "eng-spa", "--out", "{out}", "--no-mt-cache"]
ALEE = [*B, "alee", "--out", "{out}", "--no-nli", "--pawsx", "{pawsx}"]
BUCC = [*B, "bucc", "--out", "{out}"]
AL = ["eval", "alignment", "--out", "{out}"]
WR = ["eval", "word-retrieval", "--out", "{out}"]
SR = ["eval", "sentence-retrieval", "--out", "{out}"]
TACC = ["eval", "tacc", "--out", "{out}"]
EB = ["eval", "bucc", "--out", "{out}"]
BT = ["eval", "bitext-retrieval", "--out", "{out}"]
EA = ["eval", "embedding-aligner", "--out", "{out}"]
AGS = ["eval", "aligners", "--out", "{out}"]
M = ["--model", "random"]

CASES = [
    # ---------------------------------------------------------------- top level, list
    (["frobnicate"], 2, ["invalid choice"]),
    (["build"], 2, ["required"]),
    (["build", "cdb"], 2, ["invalid choice"]),
    (["eval"], 2, ["required"]),
    (["eval", "word-retrival"], 2, ["invalid choice"]),
    (
        ["list", "extra"],
        2,
        ["invalid choice", "corpora"],
    ),  # `xlbench list corpora` is the one listing
    (["list", "corpora", "extra"], 2, ["unrecognized arguments"]),
    (["--bogus", "list"], 2, ["unrecognized arguments"]),
    # ---------------------------------------------------------------- build: common options
    ([*B, "cbd"], 2, ["--lang"]),
    ([*CBD[:-2], "--lang", "xx-yy"], 2, ["Unknown language code 'xx'"]),
    ([*CBD[:2], "--lang", "eng", "--out", "{out}"], 2, ["pair"]),
    ([*CBD[:2], "--lang", "eng-eng", "--out", "{out}"], 2, ["eng"]),
    ([*CBD[:2], "--lang", "", "--out", "{out}"], 2, ["language"]),
    ([*CBD[:2], "--lang", "eng-deu-fra", "--out", "{out}"], 2, ["pair"]),
    # a BCP-47 tag is one language, not a pair (was Portuguese->Breton, Chinese->Twi)
    ([*CBD_OK[:2], "--lang", "pt-BR", *CBD_OK[4:]], 2, ["'pt-BR' is one language", "eng-pt_BR"]),
    ([*CBD_OK[:2], "--lang", "zh-TW", *CBD_OK[4:]], 2, ["'zh-TW' is one language", "Traditional"]),
    ([*SILVER[:2], "--lang", "zh-CN", *SILVER[4:]], 2, ["'zh-CN' is one language"]),
    ([*CBD_OK, "--seed", "x"], 2, ["invalid int value"]),
    ([*CBD_OK, "--version", "one"], 2, ["version"]),
    ([*CBD_OK, "--version", "1.2"], 2, ["version"]),
    ([*CBD_OK, "--version", "-1.0.0"], 2, ["version"]),
    # ---------------------------------------------------------------- build cbd: inputs
    ([*CBD, "--tsv", "{missing}", "--dict", "{dict}"], 2, ["missing.txt", "does not exist"]),
    ([*CBD, "--tsv", "{dir}", "--dict", "{dict}"], 2, ["is a directory, expected a file"]),
    ([*CBD, "--tsv", "{latin1}", "--dict", "{dict}"], 2, ["latin1.txt", "UTF-8", "line 1"]),
    ([*CBD, "--tsv", "{empty}", "--dict", "{dict}"], 2, ["empty.txt"]),
    ([*CBD, "--tsv", "{onecol}", "--dict", "{dict}"], 2, ["onecol.txt"]),
    # one length guard in every text reader (a 1 MB line ran cbd out of memory after 482 s)
    (
        [*CBD, "--tsv", "{long_line}", "--dict", "{dict}"],
        2,
        ["long_line.txt", "line 2", "characters"],
    ),
    ([*CBD_OK, "--gold", "{long_line}"], 2, ["long_line.txt", "line 2", "characters"]),
    (
        [*CBD, "--src-file", "{missing}", "--tgt-file", "{corpus}", "--dict", "{dict}"],
        2,
        ["does not exist"],
    ),
    (
        [*CBD, "--src-file", "{dir}", "--tgt-file", "{corpus}", "--dict", "{dict}"],
        2,
        ["is a directory"],
    ),
    ([*CBD, "--src-file", "{latin1}", "--tgt-file", "{latin1}", "--dict", "{dict}"], 2, ["UTF-8"]),
    (
        [*CBD, "--src-file", "{two_lines}", "--tgt-file", "{three_lines}", "--dict", "{dict}"],
        2,
        ["lines"],
    ),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{missing}"], 2, ["missing.txt", "does not exist"]),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{dir}"], 2, ["is a directory, expected a file"]),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{latin1}"], 2, ["latin1.txt", "UTF-8", "iconv"]),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{empty}"], 2, ["no entries"]),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{three_words}"], 2, ["is not 'src tgt'"]),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{dict_none}"], 2, ["No dictionary pair occurs"]),
    (
        [*CBD, "--tsv", "{corpus}", "--dict", "{notgz_index}"],
        2,
        ["notgz.dict.dz", "is not gzip data"],
    ),
    (
        [*CBD, "--tsv", "{corpus}", "--dict", "{beyond_index}"],
        2,
        ["beyond.index", "beyond.dict.dz", "truncated"],
    ),
    (
        [*CBD, "--tsv", "{corpus}", "--dict", "{truncgz_index}"],
        2,
        ["truncgz.dict.dz", "truncated gzip"],
    ),
    (
        [*CBD, "--tsv", "{corpus}", "--dict", "{nodata_index}"],
        2,
        ["nodata.dict", "does not exist beside"],
    ),
    ([*CBD, "--tsv", "{corpus}", "--dict", "{badb64_index}"], 2, ["badb64.index", "base64"]),
    (
        [*CBD, "--tsv", "{corpus}", "--dict", "{shortline_index}"],
        2,
        ["shortline.index", "headword<TAB>offset"],
    ),
    ([*CBD_OK, "--gold", "{gold_99}"], 2, ["Gold link 99-99", "out of range"]),
    (
        [*CBD_OK, "--gold", "{gold_99_1b}", "--gold-one-based"],
        2,
        ["Gold link 99-99", "out of range"],
    ),
    ([*CBD_OK, "--gold", "{gold_zero}", "--gold-one-based"], 2, ["index 0", "--gold-one-based"]),
    ([*CBD_OK, "--gold", "{gold_colon}"], 2, ["Bad alignment link '1:2'"]),
    ([*CBD_OK, "--gold", "{gold_short}"], 2, ["has 1 lines but the corpus"]),
    ([*CBD_OK, "--gold", "{gold_long}"], 2, ["gold_long.wa", "line 7", "corpus ends at line 6"]),
    (
        [*CBD_OK, "--license", "FooBar", "--license-reason", "x"],
        2,
        ["--license 'FooBar'", "SPDX", "LicenseRef-"],
    ),
    ([*CBD_OK, "--gold", "{latin1}"], 2, ["UTF-8"]),
    ([*CBD_OK, "--gold", "{dir}"], 2, ["is a directory"]),
    ([*CBD_OK, "--gold", "{missing}"], 2, ["does not exist"]),
    ([*CBD_OK, "--max-pairs", "-1"], 2, ["--max-pairs"]),
    ([*CBD_OK, "--max-sentences", "0"], 2, ["--max-sentences"]),
    ([*CBD_OK, "--workers", "0"], 2, ["--workers"]),
    ([*CBD_OK, "--seed", "-1"], 2, ["--seed must be at least 0"]),
    ([*CBD_OK, "--aligner", "giza"], 2, ["invalid choice"]),
    ([*CBD_OK, "--aligner-extra", "a", "b", "c"], 2, ["--aligner-extra"]),
    ([*CBD_OK[:-2], "--dict", "cedict"], 2, ["Chinese"]),
    ([*CBD_OK, "--out", "{corpus}"], 2, ["corpus.tsv"]),
    ([*CBD_OK, "--out", "{ds}"], 2, ["--overwrite"]),
    # ---------------------------------------------------------------- --corpus (issue 24), every builder
    ([*CBD, "--corpus", "nope", "--dict", "{dict}"], 2, ["Unknown corpus 'nope'", "ntrex128"]),
    ([*CBD_OK, "--corpus", "ntrex128:{dir}"], 2, ["either --corpus or --tsv"]),
    ([*CBD, "--corpus", "ntrex128:{dir}", "--dict", "{dict}"], 2, ["no newstest2019-src.eng.txt"]),
    ([*CBD, "--corpus", "ntrex128", "--dict", "{dict}"], 2, ["needs DIR"]),
    (
        [*CBD, "--corpus", "tatoeba:{dir}", "--corpus-opt", "colour=red"],
        2,
        ["'colour' is not an option"],
    ),
    ([*BUCC, "--lang", "deu-eng", "--corpus", "flores200:{dir}"], 2, ["no devtest/ folder"]),
    ([*SILVER, "--corpus", "hf:org/x", "--corpus-opt", "nokey"], 2, ["KEY=VALUE"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--corpus", "nope"], 2, ["Unknown corpus"]),
    # ---------------------------------------------------------------- build silver
    ([*SILVER, "--src", "{missing}"], 2, ["does not exist"]),
    ([*SILVER, "--src", "{dir}"], 2, ["is a directory"]),
    ([*SILVER, "--src", "{latin1}"], 2, ["latin1.txt", "UTF-8"]),
    ([*SILVER, "--src", "{empty}"], 2, ["empty.txt"]),
    ([*SILVER, "--src", "{long_line}"], 2, ["long_line.txt", "line 2", "characters"]),
    ([*SILVER, "--small-src", "{missing}"], 2, ["does not exist"]),
    ([*SILVER, "--small-src", "{latin1}"], 2, ["UTF-8"]),
    ([*SILVER, "--src", "{two_lines}", "--small-src", "{two_lines}"], 2, ["--src", "--small-src"]),
    ([*SILVER, "--src", "{two_lines}", "--mt", "nosuch"], 2, ["Unknown MT system 'nosuch'"]),
    ([*SILVER, "--src", "{two_lines}", "--mt", "apertium:xxx-yyy"], 2, ["xxx-yyy"]),
    ([*SILVER, "--src", "{two_lines}", "--alternatives", "0"], 2, ["--alternatives"]),
    ([*SILVER, "--src", "{two_lines}", "--min-valid", "9"], 2, ["--min-valid"]),
    ([*SILVER, "--src", "{two_lines}", "--max-targets", "0"], 2, ["--max-targets"]),
    ([*SILVER, "--src", "{two_lines}", "--mt-batch-size", "0"], 2, ["--mt-batch-size"]),
    ([*SILVER, "--src", "{two_lines}", "--max-sentences", "0"], 2, ["--max-sentences"]),
    (
        [*SILVER, "--src", "{two_lines}", "--min-words", "10", "--max-words", "2"],
        2,
        ["--min-words 10 is more than --max-words 2"],
    ),
    ([*SILVER, "--src", "{two_lines}", "--mt-rate", "nan"], 2, ["--mt-rate", "nan"]),
    ([*SILVER, "--src", "{two_lines}", "--substitutes", "thesaurus"], 2, ["invalid choice"]),
    ([*SILVER, "--src", "{two_lines}", "--tokenizer", "bpe"], 2, ["invalid choice"]),
    ([*SILVER, "--src", "{two_lines}", "--device", "tpu9"], 2, ["--device 'tpu9'", "cuda"]),
    (
        [*SILVER, "--src", "{two_lines}", "--substitutes", "mlm", "--device", "cuda:99"],
        2,
        ["--device cuda:99", "CUDA device(s)", "--device cpu"],
    ),  # fmt: skip
    (
        [
            *B,
            "silver",
            "--lang",
            "eng-spa",
            "--out",
            "{out}",
            "--src",
            "{two_lines}",
            "--mt-cache",
            "{corrupt_sqlite}",
        ],
        2,
        ["corrupt.sqlite", "not a usable SQLite database"],
    ),  # fmt: skip
    (
        [
            *B,
            "silver",
            "--lang",
            "eng-spa",
            "--out",
            "{out}",
            "--src",
            "{two_lines}",
            "--mt-cache",
            "{dir}",
        ],
        2,
        ["is a directory, expected a file"],
    ),  # fmt: skip
    (
        [
            *B,
            "silver",
            "--lang",
            "eng-spa",
            "--out",
            "{out}",
            "--src",
            "{two_lines}",
            "--mt-cache",
            "{blocked}/c.sqlite",
        ],
        2,
        ["Cannot create the translation cache"],
    ),  # fmt: skip
    ([*B, "silver", "--lang", "xxx-spa", "--out", "{out}"], 2, ["Unknown language code"]),
    # ---------------------------------------------------------------- build alee
    ([*B, "alee", "--out", "{out}"], 2, ["--langs"]),
    ([*ALEE, "--langs", "xx", "--foils", "{foils_ok}"], 2, ["language"]),
    ([*ALEE, "--langs", "zh-TW", "--foils", "{foils_ok}"], 2, ["PAWS-X has no cmn_Hant", "zh-CN"]),
    (
        [*ALEE, "--langs", "pt_BR,pt_PT", "--foils", "{foils_ok}", "--tsv", "pt_BR={corpus}"],
        2,
        ["'pt_BR' and 'pt_PT'", "both por_Latn"],
    ),
    ([*ALEE, "--langs", "deu,de", "--foils", "{foils_ok}"], 2, ["'deu' and 'de'", "deu_Latn"]),
    ([*ALEE, "--langs", "deu", "--device", "cuda:99"], 2, ["--device cuda:99", "--device cpu"]),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--device", "tpu9"],
        2,
        ["--device 'tpu9'"],
    ),
    ([*ALEE, "--langs", "deu", "--foils", "{missing}"], 2, ["does not exist"]),
    ([*ALEE, "--langs", "deu", "--foils", "{dir}"], 2, ["is a directory"]),
    ([*ALEE, "--langs", "deu", "--foils", "{latin1}"], 2, ["latin1.txt", "UTF-8"]),
    ([*ALEE, "--langs", "deu", "--foils", "{empty}"], 2, ["is empty"]),
    ([*ALEE, "--langs", "deu", "--foils", "{long_line}"], 2, ["long_line.txt", "characters"]),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_quote_tsv}"],
        2,
        ["foils_quote.tsv", "line 3", "quote"],
    ),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_quote_csv}"],
        2,
        ["foils_quote.csv", "line 3", "quote"],
    ),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_noheader}"], 2, ["en_orig, en_foil, type"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_badtype}"], 2, ["Unknown foil type 'banana'"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_emptycell}"], 2, ["empty original or foil"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_short}"], 2, ["fields"]),
    # foils whose originals are not in the corpus gave an English-only dataset with exit 0
    ([*ALEE, "--langs", "deu", "--foils", "{foils_nomatch}"], 2, ["translation in deu_Latn"]),
    (
        [*ALEE[:-2], "--langs", "deu", "--foils", "{foils_ok}", "--pawsx", "{missing}"],
        2,
        ["PAWS-X", "does not exist"],
    ),
    (
        [*ALEE[:-2], "--langs", "deu", "--foils", "{foils_ok}", "--pawsx", "{dir}"],
        2,
        ["test-en.tsv"],
    ),
    (
        [*ALEE[:-2], "--langs", "fra", "--foils", "{foils_ok}", "--pawsx", "{pawsx}"],
        2,
        ["test-fr.tsv", "missing"],
    ),
    (
        [*ALEE[:-2], "--langs", "deu", "--foils", "{foils_ok}", "--pawsx", "{pawsx_misaligned}"],
        2,
        ["line-aligned"],
    ),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--tsv", "nonsense"], 2, ["LANG="]),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--tsv", "deu={missing}"],
        2,
        ["does not exist"],
    ),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--tsv", "deu={latin1}"], 2, ["UTF-8"]),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--parallel", "deu={missing},{missing}"],
        2,
        ["does not exist"],
    ),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--types", "ZZ"], 2, ["ZZ"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--limit", "0"], 2, ["--limit"]),
    ([*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--limit", "-1"], 2, ["--limit", "-1"]),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--entail-threshold", "nan"],
        2,
        ["--entail-threshold", "nan"],
    ),
    (
        [*ALEE, "--langs", "deu", "--foils", "{foils_ok}", "--splitter", "nltk"],
        2,
        ["invalid choice"],
    ),
    # ---------------------------------------------------------------- build bucc
    ([*B, "bucc", "--out", "{out}"], 2, ["--lang"]),
    ([*BUCC, "--lang", "deu-eng", "--gold-pairs", "1"], 2, ["--gold-pairs must be at least 2"]),
    ([*BUCC, "--lang", "deu-eng", "--test-fraction", "nan"], 2, ["--test-fraction", "nan"]),
    ([*BUCC, "--lang", "eng-deu", "--bucc-dir", "{bucc_ok}"], 2, ["--lang deu-eng"]),
    ([*BUCC, "--lang", "deu-fra", "--bucc-dir", "{bucc_ok}"], 2, ["xx-en"]),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{missing}"], 2, ["BUCC folder", "does not exist"]),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{two_lines}"], 2, ["is a file, not a folder"]),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{empty_dir}"], 2, ["No BUCC files for de-en"]),
    (
        [*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_latin1}"],
        2,
        ["de-en.sample.de", "UTF-8", "line 4"],
    ),
    (
        [*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_oneside}"],
        2,
        ["a BUCC split needs both sides"],
    ),
    (
        [*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_badid}"],
        2,
        ["is not of the form 'de-000000001'"],
    ),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_dupid}"], 2, ["duplicate id"]),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_notab}"], 2, ["tab-separated fields"]),
    ([*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_badgold}"], 2, ["gold id", "not in the"]),
    (
        [*BUCC, "--lang", "deu-eng", "--bucc-dir", "{bucc_ok}", "--parallel", "{two_lines}"],
        2,
        ["--bucc-dir"],
    ),
    ([*BUCC, "--lang", "deu-eng", "--parallel", "{missing}", "{missing}"], 2, ["does not exist"]),
    ([*BUCC, "--lang", "deu-eng", "--parallel", "{latin1}", "{latin1}"], 2, ["UTF-8"]),
    ([*BUCC, "--lang", "deu-eng", "--parallel", "{two_lines}", "{three_lines}"], 2, ["lines"]),
    ([*BUCC, "--lang", "deu-eng", "--gold-pairs", "0"], 2, ["--gold-pairs"]),
    ([*BUCC, "--lang", "deu-eng", "--parallel-fraction", "2"], 2, ["--parallel-fraction"]),
    ([*BUCC, "--lang", "deu-eng", "--test-fraction", "-1"], 2, ["--test-fraction"]),
    ([*BUCC, "--lang", "deu-eng", "--unify"], 2, ["--unify applies to official files"]),
    # ---------------------------------------------------------------- eval alignment
    ([*AL, "--pred", "{pred0}"], 2, ["--gold", "--dataset"]),
    ([*AL, "--gold", "{gold1}"], 2, ["--pred"]),
    ([*AL, "--gold", "{latin1}", "--pred", "{pred0}"], 2, ["latin1.txt", "UTF-8", "line 1"]),
    ([*AL, "--gold", "{gold1}", "--pred", "{latin1}"], 2, ["latin1.txt", "UTF-8"]),
    ([*AL, "--gold", "{dir}", "--pred", "{pred0}"], 2, ["is a directory, expected a file"]),
    ([*AL, "--gold", "{missing}", "--pred", "{pred0}"], 2, ["missing.txt", "does not exist"]),
    ([*AL, "--gold", "{gold1}", "--pred", "{missing}"], 2, ["does not exist"]),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred0}"], 2, ["Cannot decide", "gold file", "0 or 1"]),
    (
        [*AL, "--gold", "{pred0}", "--pred", "{pred_nozero}"],
        2,
        ["Cannot decide", "prediction file", "--text"],
    ),
    (
        [*AL, "--gold", "{naacl_bad}", "--pred", "{pred0}", "--gold-format", "pharaoh"],
        2,
        ["Bad alignment link"],
    ),
    (
        [
            *AL,
            "--gold",
            "{gold1}",
            "--pred",
            "{pred_nozero}",
            "--text",
            "{text}",
            "--index-base",
            "0",
        ],
        2,
        ["prediction file", "sentence 0", "out of range"],
    ),  # fmt: skip
    (
        [*AL, "--gold", "{gold_oob}", "--pred", "{pred0}", "--text", "{text}"],
        2,
        ["gold file", "sentence 0", "out of range"],
    ),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--text", "{latin1}"], 2, ["UTF-8"]),
    (
        [*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--text", "{no_sep}"],
        2,
        ["source ||| target"],
    ),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--text", "{dir}"], 2, ["is a directory"]),
    ([*AL, "--gold", "{gold_colon}", "--pred", "{pred0}"], 2, ["Bad alignment link '1:2'"]),
    (
        [*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--one-based"],
        2,
        ["declared 1-based", "index 0"],
    ),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--index-base", "2"], 2, ["invalid choice"]),
    (
        [*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--gold-format", "xml"],
        2,
        ["invalid choice"],
    ),
    (
        [
            *AL,
            "--gold",
            "{gold1}",
            "--pred",
            "{gold_tab}",
            "--pred-format",
            "pharaoh",
            "--index-base",
            "0",
        ],
        2,
        ["has a TAB"],
    ),
    (
        [*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--gold-format", "id", "--index-base", "0"],
        2,
        ["is not 'id<TAB>links'"],
    ),
    (
        [*AL, "--gold", "{naacl_bad}", "--pred", "{pred0}", "--gold-format", "naacl"],
        2,
        ["is not NAACL"],
    ),
    (
        [*AL, "--gold", "{naacl_zero}", "--pred", "{pred0}"],
        2,
        ["links word 0 to word 0", "0-based"],
    ),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred_short}", "--index-base", "1"], 2, ["sentences"]),
    ([*AL, "--gold", "{gold1}", "--pred", "{pred0}", "--possible", "maybe"], 2, ["invalid choice"]),
    ([*AL, "--dataset", "{missing}", "--pred", "{pred0}"], 2, ["missing.txt"]),
    ([*AL, "--dataset", "{dir}", "--pred", "{pred0}"], 2, ["not a built xlbench dataset"]),
    ([*AL, "--dataset", "{tmp}/org/typo", "--pred", "{pred0}"], 2, ["no such folder"]),
    # a one-line prediction against a dataset of two sentences (scored as empty predictions before)
    (
        [*AL, "--dataset", "{ds_silver}", "--pred", "{pred_short}"],
        2,
        ["has 2 sentences", "1 lines"],
    ),
    # ---------------------------------------------------------------- eval word-/sentence-retrieval (cbd)
    ([*WR, *M], 2, ["--dataset"]),
    ([*WR, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*WR, "--dataset", "{dir}", *M], 2, ["not a built xlbench dataset"]),
    ([*WR, "--dataset", "{ds}", "--model", "nosuchmodel"], 2, ["Unknown model spec 'nosuchmodel'"]),
    ([*WR, "--dataset", "{ds}", "--model", "random:x:y"], 2, ["random:x:y", "integer"]),
    ([*WR, "--dataset", "{ds}", "--model", "random:-4"], 2, ["random:-4", "at least 1"]),
    ([*WR, "--dataset", "{ds}", *M, "--device", "tpu9"], 2, ["tpu9"]),
    ([*WR[:-2], "--out", "/proc/x", "--dataset", "{ds}", *M], 2, ["/proc/x"]),
    ([*WR, "--dataset", "{ds}", *M, "--config", "nope"], 2, ["Config 'nope'"]),
    ([*WR, "--dataset", "{ds}", *M, "--split", "nope"], 2, ["nope"]),
    ([*WR, "--dataset", "{ds}", *M, "--layers", "x"], 2, ["layers"]),
    ([*WR, "--dataset", "{ds}", *M, "--layers", "0,,1"], 2, ["--layers", "0,,1"]),
    ([*WR, "--dataset", "{ds}", *M, "--layers", "1,-1,1"], 2, ["layer 1 twice"]),
    ([*WR, "--dataset", "{ds}", *M, "--n", "0"], 2, ["--n"]),
    ([*WR, "--dataset", "{ds}", *M, "--criterion", "dot"], 2, ["invalid choice"]),
    ([*WR, "--dataset", "{ds}", *M, "--csls-k", "0"], 2, ["--csls-k"]),
    (
        [*WR, "--dataset", "{ds}", "--static-vectors", "{missing}", "{missing}"],
        2,
        ["does not exist"],
    ),
    (
        [*WR, "--dataset", "{ds}", *M, "--static-vectors", "{two_lines}", "{two_lines}"],
        2,
        ["not both"],
    ),
    (
        [*WR, "--dataset", "{ds}", "--static-vectors", "{foreign_vec}", "{foreign_vec}"],
        2,
        ["foreign.vec", "none of the"],
    ),
    ([*WR, "--dataset", "{ds}", "--static-vectors", "{nan_vec}", "{nan_vec}"], 2, ["NaN"]),
    ([*WR, "--dataset", "{ds}", *M, "--device", "cuda:99"], 2, ["cuda:99", "not available"]),
    ([*BT, "--src", "{two_lines}", "--tgt", "{two_lines}", *M, "--lang", "xx-yy"], 2, ["xx"]),
    # model output is checked at the one encoder boundary (issue 26/27): one sentence naming the model
    *[
        (
            [
                *BT,
                "--src",
                "{two_lines}",
                "--tgt",
                "{two_lines}",
                "--model",
                f"callable:xl_bad_models:{fn}",
            ],
            2,
            [f"xl_bad_models:{fn}", *words],
        )
        for fn, words in [
            ("nan", ["non-finite"]),
            ("inf", ["non-finite"]),
            ("zeros", ["all-zero"]),
            ("strings", ["not numbers"]),
            ("raises", ["raised RuntimeError", "the API said no"]),
            ("flat", ["shape (2,)"]),
        ]
    ],
    ([*WR, "--dataset", "{ds_badcard}", *M], 2, ["README.md", "UTF-8"]),
    ([*WR, "--dataset", "{ds_deepcard}", *M], 2, ["YAML", "nested"]),
    ([*WR, "--dataset", "{ds_badparquet}", *M], 2, ["parquet"]),
    ([*WR, "--dataset", "{ds_nocard}", *M], 2, ["no README.md"]),
    ([*SR, "--dataset", "{ds}"], 2, ["--model"]),
    ([*SR, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*SR, "--dataset", "{ds}", "--model", "hf:"], 2, ["hf:"]),
    ([*SR, "--dataset", "{ds}", *M, "--config", "nope"], 2, ["Config 'nope'"]),
    ([*SR, "--dataset", "{ds}", *M, "--batch-size", "0"], 2, ["--batch-size"]),
    ([*SR, "--dataset", "{ds}", *M, "--layers", "0,,1"], 2, ["--layers", "0,,1"]),
    ([*SR, "--dataset", "{ds_badparquet}", *M], 2, ["parquet"]),
    # issue 27 item 4: every argument of a grid is checked before its first cell writes
    ([*WR, "--dataset", "{ds}", *M, "--model", "nosuchmodel"], 2, ["nosuchmodel"]),
    (
        [*SR, "--dataset", "{ds}", *M, "--model", "st:{missing}"],
        2,
        ["missing.txt", "does not exist"],
    ),
    (
        [*SR, "--dataset", "{ds}", *M, "--model", "hf:{tmp}/no/model"],
        2,
        ["no/model", "does not exist"],
    ),
    (
        [*SR, "--dataset", "{ds}", *M, "--model", "callable:no_such_mod_xyz:f"],
        2,
        ["no_such_mod_xyz"],
    ),
    ([*SR, "--dataset", "{ds}", "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    # issue 27 item 6: run options are type- and range-checked where they are declared
    ([*WR, "--dataset", "{ds}", *M, "--seed", "-1"], 2, ["--seed must be at least 0"]),
    ([*SR, "--dataset", "{ds}", *M, "--seed", "zero"], 2, ["invalid int value"]),
    ([*SR, "--dataset", "{ds}", *M, "--bootstrap", "-1"], 2, ["--bootstrap must be 0"]),
    # ---------------------------------------------------------------- eval tacc, bucc, bitext-retrieval
    ([*TACC, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*TACC, "--dataset", "{ds}", *M], 2, ["alee"]),
    ([*TACC, "--dataset", "{dir}", *M], 2, ["not a built xlbench dataset"]),
    ([*TACC, "--dataset", "{ds}", *M, "--pooling", "max"], 2, ["invalid choice"]),
    ([*TACC, "--dataset", "{ds}", *M, "--role", "both"], 2, ["invalid choice"]),
    ([*TACC, "--dataset", "{ds}", *M, "--tie-tolerance", "nan"], 2, ["--tie-tolerance", "nan"]),
    ([*TACC, "--dataset", "{ds}", *M, "--tie-tolerance", "-1"], 2, ["--tie-tolerance", "-1"]),
    ([*TACC, "--dataset", "{ds}", *M, "--tie-rule", "draw"], 2, ["invalid choice"]),
    ([*EB, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*EB, "--dataset", "{ds}", *M], 2, ["bucc"]),
    ([*EB, "--dataset", "{ds}", *M, "--k", "0"], 2, ["--k"]),
    ([*EB, "--dataset", "{ds}", *M, "--margin", "huge"], 2, ["invalid choice"]),
    ([*EB, "--dataset", "{ds}", *M, "--threshold", "x"], 2, ["invalid float value"]),
    ([*EB, "--dataset", "{ds}", *M, "--threshold", "nan"], 2, ["--threshold", "nan"]),
    (
        [*EB, "--dataset", "{ds}", *M, "--threshold", "1", "--threshold-from", "x"],
        2,
        ["not allowed with"],
    ),
    ([*BT, *M], 2, ["--src", "--dataset"]),
    (
        [*BT, "--src", "{two_lines}", "--tgt", "{two_lines}", *M, "--margin-candidates", "k"],
        2,
        ["invalid choice"],
    ),
    ([*BT, "--src", "{missing}", "--tgt", "{missing}", *M], 2, ["does not exist"]),
    ([*BT, "--src", "{latin1}", "--tgt", "{latin1}", *M], 2, ["UTF-8"]),
    ([*BT, "--src", "{dir}", "--tgt", "{two_lines}", *M], 2, ["is a directory"]),
    ([*BT, "--src", "{two_lines}", "--tgt", "{three_lines}", *M], 2, ["lines"]),
    ([*BT, "--src", "{two_lines}", *M], 2, ["--tgt"]),
    ([*BT, "--src", "{onecol}", "--tgt", "{onecol}", *M], 2, ["1 sentence pair(s)", "at least 2"]),
    ([*BT, "--src", "{empty}", "--tgt", "{empty}", *M], 2, ["0 sentence pair(s)", "at least 2"]),
    ([*BT, "--src", "{long_line}", "--tgt", "{long_line}", *M], 2, ["long_line.txt", "line 2"]),
    ([*AL, "--gold", "{gold1}", "--pred", "{long_line}"], 2, ["long_line.txt", "line 2"]),
    ([*EA, *M, "--text", "{long_line}", "--links", "{gold1}"], 2, ["long_line.txt", "line 2"]),
    ([*BT, "--src", "{two_lines}", "--tgt", "{two_lines}", *M, "--k", "0"], 2, ["--k"]),
    (
        [*BT, "--src", "{two_lines}", "--tgt", "{two_lines}", "--model", "random:x:y"],
        2,
        ["integer"],
    ),
    # ---------------------------------------------------------------- eval embedding-aligner, aligners
    ([*EA, "--text", "{text}"], 2, ["--model"]),
    ([*EA, *M], 2, ["--dataset", "--silver", "--text"]),
    ([*EA, *M, "--text", "{text}"], 2, ["--links"]),
    ([*EA, *M, "--text", "{text}", "--similarity", "dot"], 2, ["invalid choice"]),
    ([*EA, *M, "--text", "{missing}", "--links", "{gold1}"], 2, ["does not exist"]),
    ([*EA, *M, "--text", "{latin1}", "--links", "{gold1}"], 2, ["UTF-8"]),
    ([*EA, *M, "--text", "{no_sep}", "--links", "{gold1}"], 2, ["source ||| target"]),
    ([*EA, *M, "--text", "{text}", "--links", "{latin1}"], 2, ["UTF-8"]),
    ([*EA, *M, "--silver", "{missing}"], 2, ["does not exist"]),
    (
        [*EA, *M, "--dataset", "{ds_silver}", "--config", "x"],
        2,
        ["--config 'x' is not an alignment"],
    ),
    ([*EA, *M, "--silver", "{empty_dir}"], 2, ["parallel.txt"]),
    ([*EA, *M, "--text", "{text}", "--method", "greedy"], 2, ["invalid choice"]),
    (
        [*EA, *M, "--text", "{text}", "--links", "{gold1}", "--limit", "0"],
        2,
        ["--limit", "positive"],
    ),
    ([*EA, *M, "--text", "{text}", "--links", "{gold1}", "--limit", "-1"], 2, ["--limit", "-1"]),
    ([*AGS], 2, ["--pair"]),
    ([*AGS, "--pair", "xx-yy"], 2, ["xx"]),
    ([*AGS, "--pair", "eng-fra"], 2, ["Bad --pair field 'eng-fra'", "key=value"]),
    ([*AGS, "--pair", "name=x"], 2, ["silver", "dataset"]),
    ([*AGS, "--pair", "name=x,silver={missing}"], 2, ["missing.txt"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir}"], 2, ["parallel.txt"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir},gold_text={text}"], 2, ["gold_links"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir}", "--methods", "giza"], 2, ["giza"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir}", "--max-train", "-1"], 2, ["--max-train", "-1"]),
    ([*AGS, "--pair", "name=x,name=y,silver={empty_dir}"], 2, ["gives name twice"]),
    (
        [*AGS, "--pair", "name=x,silver={empty_dir}", "--pair", "name=x,silver={dir}"],
        2,
        ["Two --pair options are named 'x'"],
    ),
    # ---------------------------------------------------------------- validate
    (["validate"], 2, ["folder"]),
    (["validate", "{missing}"], 2, ["missing.txt"]),
    (["validate", "{dir}"], 2, ["README.md"]),
    (["validate", "{corpus}"], 2, ["corpus.tsv"]),
    (["validate", "{ds_nocard}"], 2, ["README.md"]),
    (["validate", "{ds_badcard}"], 1, ["README.md", "UTF-8"]),
    (["validate", "{ds_deepcard}"], 1, ["YAML", "nested"]),
    (["validate", "{ds_badparquet}"], 1, ["parquet"]),
    (["validate", "{ds_nomanifest}"], 1, ["manifest"]),
    # ---------------------------------------------------------------- folders edited in place (issue 27.3, 27.6)
    ([*SR, "--dataset", "{ds_edited}", *M], 2, ["manifest.json records", "rebuild"]),
    (["validate", "{ds_edited}"], 1, ["manifest.json records", "rebuild"]),
    ([*WR, "--dataset", "{ds_symlink}", *M], 2, ["symbolic link"]),
    (["validate", "{ds_symlink}"], 1, ["symbolic link"]),
    ([*SR, "--dataset", "{ds_outside}", *M], 2, ["should be", "data/eng_Latn-deu_Latn/test"]),
    (["validate", "{ds_outside}"], 1, ["should be"]),
    ([*WR, "--dataset", "{ds_dupid}", *M], 2, ["duplicate id"]),
    (["validate", "{ds_dupid}"], 1, ["duplicate id"]),
    ([*SR, "--dataset", "{ds_nulltext}", *M], 2, ["tgt_sentence", "null value"]),
    (["validate", "{ds_nulltext}"], 1, ["null value"]),
    ([*TACC, "--dataset", "{alee_nulltext}", *M], 2, ["target_orig", "null value"]),
    ([*EB, "--dataset", "{bucc_nulltext}", *M], 2, ["'text'", "null value"]),
    ([*EB, "--dataset", "{bucc_badgoldid}", *M], 2, ["names no row"]),
    (["validate", "{bucc_badgoldid}"], 1, ["names no row"]),
    (["validate", "{bucc_swapped}"], 1, ["manifest.json records"]),
    ([*SR, "--dataset", "{ds_nodata}", *M], 2, ["is missing", "rebuild"]),
    (["validate", "{ds_nodata}"], 1, ["is missing"]),
    ([*SR, "--dataset", "{ds_noconfigname}", *M], 2, ["config_name"]),
    (["validate", "{ds_noconfigname}"], 1, ["config_name"]),
    ([*SR, "--dataset", "{ds_zerorows}", *M], 2, ["no rows", "nothing to score"]),
    ([*EB, "--dataset", "{bucc_zerotrain}", *M], 2, ["'train'", "no rows"]),
    (["validate", "{ds_numbytes}"], 1, ["num_bytes"]),
    ([*SR, "--dataset", "{ds_params}", *M], 2, ["edited after the build"]),
    (["validate", "{ds_params}"], 1, ["edited after the build"]),
    (["validate", "{ds_noinputs}"], 1, ["lacks ['inputs']"]),
    # ---------------------------------------------------------------- publish
    (["publish", "{ds}"], 2, ["--repo"]),
    (["publish", "{missing}", "--repo", "org/x", "--dry-run"], 2, ["missing.txt"]),
    (["publish", "{dir}", "--repo", "org/x", "--dry-run"], 2, ["README.md"]),
    (["publish", "{ds}", "--repo", "not a repo", "--dry-run"], 2, ["not a repo"]),
    (
        ["publish", "{ds}", "--repo", "org/x/y", "--dry-run"],
        2,
        ["must look like 'org/name', got 'org/x/y'"],
    ),
    # huggingface_hub's own repo-id rules (these passed xlbench's and failed in the client)
    (["publish", "{ds}", "--repo", "org/x\n", "--dry-run"], 2, ["not a Hub repo id"]),
    (["publish", "{ds}", "--repo", "org/a..b", "--dry-run"], 2, ["not a Hub repo id", ".."]),
    (["publish", "{ds}", "--repo", "org/a--b", "--dry-run"], 2, ["not a Hub repo id", "--"]),
    (["publish", "{ds}", "--repo", "justaname", "--dry-run"], 2, ["'org/name'"]),
    (["publish", "{ds_nocard}", "--repo", "org/x", "--dry-run"], 2, ["README.md"]),
    (["publish", "{ds_badparquet}", "--repo", "org/x", "--dry-run"], 1, ["parquet"]),
    # ---------------------------------------------------------------- result files (issue 27 item 6)
    (["compare", "{result_badscores}", "{result_badscores}"], 2, ["scores of the wrong type"]),
    (["export", "mteb", "{badscores_dir}", "--out", "{out}"], 2, ["No xlbench result"]),
    (["report", "{badscores_dir}", "--out", "{out}"], 2, ["No xlbench result"]),
    # ---------------------------------------------------------------- cache (issue 27 items 2, 7)
    (
        ["cache", "info", "--cache-dir", "{corrupt_cache}"],
        2,
        ["not a usable SQLite", "cache clear"],
    ),
    (["cache", "info", "--cache-dir", "{blocked}"], 2, ["--cache-dir", "is a file"]),
    (["cache", "clear", "--cache-dir", "{blocked}"], 2, ["--cache-dir", "is a file"]),
    # ---------------------------------------------------------------- report, export (result files)
    (["report", "{dir}", "--out", "{out}"], 2, ["No xlbench result JSON"]),
    (["export", "mteb", "{dir}", "--out", "{out}"], 2, ["No xlbench result JSON"]),
]

#: Result-file fields that are hostile (issue 27 item 1): every string of the result below is one.
HOSTILE = {
    "climb": "../../PWNED",
    "absolute": "{tmp}/abs/PWNED",
    "html": '"><img src=x onerror=alert(1)>|x',
    "dots": "..",
}
#: Commands that read such results: they succeed, write only under --out and add no markup.
UNSAFE_CASES = [
    ["report", "{hostile_results}", "--out", "{out}"],
    ["report", "{hostile_results}", "--out", "{out}", "--format", "md"],
    ["export", "mteb", "{hostile_results}", "--out", "{out}"],
]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, str]:
    """Make every input file the table names; return placeholder -> path."""
    root = tmp_path_factory.mktemp("bad-inputs")
    files: dict[str, str] = {"tmp": str(root)}

    def put(name: str, data: bytes | str, key: str | None = None) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        files[key or name.split("/")[0].split(".")[0]] = str(path)
        return path

    (root / "adir").mkdir()
    files["dir"] = str(root / "adir")
    (root / "empty_dir").mkdir()
    files["empty_dir"] = str(root / "empty_dir")
    files["missing"] = str(root / "missing.txt")
    blocker = put("blocked", "a file where a folder is expected")
    files["blocked"] = str(blocker)
    put("latin1.txt", LATIN1)
    put("empty.txt", "")
    put("onecol.txt", "just one column\n")
    put("corpus.tsv", GOOD_CORPUS)
    put("dict.txt", GOOD_DICT)
    put("three_words.txt", "a b c\n")
    put("dict_none.txt", "foo bar\nbaz qux\n")
    put("two_lines.txt", "The dog runs .\nA cat sleeps .\n")
    words = [f"{c}{i}" for c in "wxyvut" for i in range(6)]
    put("foreign.vec", "".join(f"zzz{i} 0.1 0.2\n" for i in range(5)), "foreign_vec")
    put("nan.vec", "".join(f"{w} nan 0.2\n" for w in words), "nan_vec")
    put("three_lines.txt", "one\ntwo\nthree\n")
    put("text.txt", TEXT)
    put("no_sep.txt", "no separator here\n")
    put("long_line.txt", "a short line\n" + "word " * 2001 + "\nthe end\n")
    # dictd pairs
    body = b"w0\nv0\n"
    put("notgz.index", "w0\tA\tG\n", "notgz_index")
    put("notgz.dict.dz", body)
    put("beyond.index", "w0\tA\tG\nw1\tH0\tK\n", "beyond_index")
    put("beyond.dict.dz", gzip.compress(body))
    put("truncgz.index", "w0\tA\tG\n", "truncgz_index")
    put("truncgz.dict.dz", gzip.compress(body * 50)[:15])
    put("nodata.index", "w0\tA\tG\n", "nodata_index")
    put("badb64.index", "w0\t!!\tG\n", "badb64_index")
    put("badb64.dict.dz", gzip.compress(body))
    put("shortline.index", "w0 only\n", "shortline_index")
    put("shortline.dict.dz", gzip.compress(body))
    # gold alignments
    put("gold_99.wa", "0-0 99-99\n" * 6)
    put("gold_99_1b.wa", "1-1 99-99\n" * 6)
    put("gold_zero.wa", "0-0\n" * 6)
    put("gold_colon.wa", "1:2\n" * 6)
    put("gold_short.wa", "0-0\n")
    put("gold_long.wa", "0-0\n" * 8)
    put("gold1.txt", "1-1 2-2\n1-1\n")
    put("gold_oob.txt", "0-0 7-7\n0-0\n")
    put("gold_tab.txt", "0\t1-1\n1\t1-1\n")
    put("pred0.txt", "0-0 1-1\n0-0\n")
    put("pred_nozero.txt", "1-1 3-3\n1-1\n")
    put("pred_short.txt", "1-1\n")
    put("naacl_bad.txt", "1 2\n")
    put("naacl_zero.txt", "1 0 0 S\n1 1 1 S\n2 1 1\n")
    # foils
    put("pawsx/test-en.tsv", "a dog runs\tthe dog runs\t1\n")
    put("pawsx/test-de.tsv", "ein Hund rennt\tder Hund rennt\t1\n")
    files["pawsx"] = str(root / "pawsx")
    put("pawsx_misaligned/test-en.tsv", "a dog runs\tthe dog runs\t1\nx\ty\t0\n")
    put("pawsx_misaligned/test-de.tsv", "ein Hund rennt\tder Hund rennt\t1\n")
    files["pawsx_misaligned"] = str(root / "pawsx_misaligned")
    put("foils_ok.csv", "en_orig,en_foil,type\na dog runs,no dog runs,PN\n")
    put(
        "foils_quote.tsv",
        'en_orig\ten_foil\ttype\na dog\tno dog\tPN\n"a cat\tno cat\tPN\nx\ty\tPN\n',
        "foils_quote_tsv",
    )
    put(
        "foils_quote.csv",
        'en_orig,en_foil,type\na dog,no dog,PN\n"a cat,no cat,PN\nx,y,PN\n',
        "foils_quote_csv",
    )
    put("foils_noheader.csv", "a,b,c\nd,e,PN\n")
    put("foils_badtype.csv", "en_orig,en_foil,type\na,b,banana\n")
    put("foils_emptycell.csv", "en_orig,en_foil,type\n,b,PN\n")
    put("foils_short.csv", "en_orig,en_foil,type\na\n")
    put("foils_nomatch.csv", "en_orig,en_foil,type\na cat sleeps,no cat sleeps,PN\n")
    # sqlite
    put("corrupt.sqlite", b"not a database " * 200, "corrupt_sqlite")
    # result JSONs whose scores are not split -> [entry]
    bad_result = {"evaluator": "bucc", "signature": "s", "main_score": 0.5}
    put("result_badscores.json", json.dumps({**bad_result, "scores": "abc"}))
    put("badscores_dir/r.json", json.dumps({**bad_result, "scores": {"test": "abc"}}))
    files["badscores_dir"] = str(root / "badscores_dir")
    put("corrupt_cache/embeddings-v2.sqlite", b"not a database " * 200)
    files["corrupt_cache"] = str(root / "corrupt_cache")
    # BUCC folders
    de = "".join(f"de-{i:09d}\tSatz {i}\n" for i in range(1, 4))
    en = "".join(f"en-{i:09d}\tsentence {i}\n" for i in range(1, 4))
    for name, de_text, en_text, gold in [
        ("bucc_ok", de, en, "de-000000001\ten-000000001\n"),
        ("bucc_latin1", de.encode() + LATIN1, en, None),
        ("bucc_oneside", de, None, None),
        ("bucc_badid", "fr-000000001\tx\n", en, None),
        ("bucc_dupid", de + "de-000000001\tnochmal\n", en, None),
        ("bucc_notab", "de-000000001 no tab\n", en, None),
        ("bucc_badgold", de, en, "de-000000009\ten-000000001\n"),
    ]:
        put(f"{name}/de-en.sample.de", de_text, name)
        if en_text is not None:
            put(f"{name}/de-en.sample.en", en_text, name)
        if gold is not None:
            put(f"{name}/de-en.sample.gold", gold, name)
        files[name] = str(root / name)
    # Built datasets: one good cbd folder and damaged copies of it.
    ds = root / "ds"
    assert main(["build", "cbd", "--lang", "eng-deu", "--tsv", files["corpus"], "--dict", files["dict"],
                 "--aligner", "none", "--out", str(ds)]) == 0  # fmt: skip
    files["ds"] = str(ds)
    for name, damage in [
        (
            "ds_badcard",
            lambda d: (d / "README.md").write_bytes((d / "README.md").read_bytes() + LATIN1),
        ),
        (
            "ds_deepcard",
            lambda d: (d / "README.md").write_text(
                "---\na: " + "[" * 5000 + "\n---\n", encoding="utf-8"
            ),
        ),
        (
            "ds_badparquet",
            lambda d: [
                p.write_bytes(p.read_bytes()[:-40]) for p in (d / "data").rglob("*.parquet")
            ],
        ),
        ("ds_nocard", lambda d: (d / "README.md").unlink()),
        ("ds_nomanifest", lambda d: (d / "manifest.json").unlink()),
        *_EDITS,
    ]:
        copy = root / name
        shutil.copytree(ds, copy)
        damage(copy)
        files[name] = str(copy)
    for name, family, damage in _OTHER_FAMILIES:
        damage(tf.tiny_folder(family, root / name))
        files[name] = str(root / name)
    files["hostile_results"] = str(_hostile_results(root, ds))
    files["ds_silver"] = str(_silver_folder(root / "ds_silver"))
    return files


def _silver_folder(root: Path) -> Path:
    """A two-sentence silver dataset folder (0-based links), as the builder writes it."""
    from datasets import Dataset

    from evaluators.schema import silver

    config = "eng_Latn-spa_Latn"
    (root / "data" / config).mkdir(parents=True)
    rows = {
        silver.ID: ["s0", "s1"],
        silver.SRC_TEXT: ["the red house", "a car"],
        silver.TGT_TEXT: ["la casa roja", "un coche"],
        silver.SRC_TOKENS: [["the", "red", "house"], ["a", "car"]],
        silver.TGT_TOKENS: [["la", "casa", "roja"], ["un", "coche"]],
        silver.SURE: [[[1, 2], [2, 1]], [[1, 1]]],
        silver.POSSIBLE: [[[1, 2], [2, 1]], [[1, 1]]],
    }
    Dataset.from_dict(rows, features=silver.SCHEMA.main.features).to_parquet(
        str(root / "data" / config / "test-00000-of-00001.parquet")
    )
    (root / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
        f"    path: data/{config}/test-00000-of-00001.parquet\n"
        "xlbench:\n  family: silver\n  version: 0.0.1\n---\n# test\n",
        encoding="utf-8",
    )
    return root


def _resealed(edit):
    """A damage that edits the test split and makes counts and digests agree again (one defect left)."""

    def damage(folder: Path) -> None:
        tf.edit_split(folder, tf.PAIR, "test", edit)
        tf.reseal(folder)

    return damage


def _symlinked(folder: Path) -> None:
    path = tf.parquet(folder, tf.PAIR, "test")
    outside = folder.parent / f"{folder.name}-elsewhere.parquet"
    path.rename(outside)
    path.symlink_to(outside)
    tf.edit_split(folder, tf.PAIR, "test", tf.set_cell("tgt_sentence", "edited elsewhere"))


def _outside(folder: Path) -> None:
    outside = folder.parent / f"{folder.name}-copy.parquet"
    shutil.copy(tf.parquet(folder, tf.PAIR, "test"), outside)
    tf.edit_card(folder, lambda c: c["configs"][0]["data_files"][0].update(path=str(outside)))


def _falsify_num_bytes(card: dict) -> None:
    card["dataset_info"][0]["splits"][0]["num_bytes"] += 1


def _swap_train_test(folder: Path) -> None:
    train, test = tf.parquet(folder, tf.PAIR, "train"), tf.parquet(folder, tf.PAIR, "test")
    a, b = train.read_bytes(), test.read_bytes()
    train.write_bytes(b)
    test.write_bytes(a)


def _zero_train(folder: Path) -> None:
    for config in (tf.PAIR, f"{tf.PAIR}-gold"):
        tf.edit_split(folder, config, "train", lambda t: t.slice(0, 0))
    tf.reseal(folder)


_EDITS = [
    (
        "ds_edited",
        lambda d: tf.edit_split(d, tf.PAIR, "test", tf.set_cell("tgt_sentence", "edited")),
    ),
    ("ds_symlink", _symlinked),
    ("ds_outside", _outside),
    ("ds_dupid", _resealed(lambda t: pa.concat_tables([t, t.slice(0, 1)]))),
    ("ds_nulltext", _resealed(tf.set_cell("tgt_sentence", None))),
    ("ds_nodata", lambda d: shutil.rmtree(d / "data")),
    ("ds_noconfigname", lambda d: tf.edit_card(d, lambda c: c["configs"][0].pop("config_name"))),
    ("ds_zerorows", _resealed(lambda t: t.slice(0, 0))),
    ("ds_numbytes", lambda d: tf.edit_card(d, _falsify_num_bytes)),
    ("ds_params", lambda d: tf.edit_manifest(d, lambda m: m["parameters"].update(max_pairs=7))),
    ("ds_noinputs", lambda d: tf.edit_manifest(d, lambda m: m.pop("inputs"))),
]


# Inputs under a folder that denies search (x): Path.is_dir() raised PermissionError (issue 27
# item 6). Root reads any folder, so as root the command runs with the capabilities that let
# it do so dropped (setpriv), on a folder owned by 'nobody'; as another user, on a chmod 000 folder.
LOCKED = [
    ["build", "cbd", "--lang", "eng-deu", "--aligner", "none", "--tsv", "{locked}/corpus.tsv",
     "--dict", "{dict}", "--out", "{out}"],
    ["eval", "bitext-retrieval", "--src", "{locked}/two_lines.txt", "--tgt", "{two_lines}",
     "--model", "random", "--out", "{out}"],
    ["eval", "word-retrieval", "--dataset", "{locked}/ds", "--model", "random", "--out", "{out}"],
]  # fmt: skip


def _unprivileged_prefix(locked: Path) -> list[str]:
    if os.geteuid() != 0:
        locked.chmod(0)
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip(
            "running as root without setpriv: root searches any folder, so it cannot be denied"
        )
    import pwd

    os.chown(locked, pwd.getpwnam("nobody").pw_uid, -1)
    locked.chmod(0o700)
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.mark.parametrize("argv", LOCKED, ids=[" ".join(a[:2]) for a in LOCKED])
def test_input_under_a_folder_without_search_permission(argv, world, tmp_path):
    import subprocess
    import sys

    locked = tmp_path / "locked"
    (locked / "sub").mkdir(parents=True)
    shutil.copy(world["corpus"], locked / "corpus.tsv")
    shutil.copy(world["two_lines"], locked / "two_lines.txt")
    shutil.copytree(world["ds"], locked / "ds")
    prefix = _unprivileged_prefix(locked)
    out = tmp_path / "out"
    files = {**world, "locked": str(locked)}
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XLBENCH_CACHE": str(tmp_path / "cache")}
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "builders", *_fill(argv, files, str(out))],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
        )  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    lines = _error_lines(proc.stderr)
    assert len(lines) == 1 and "error:" in lines[0], lines
    assert "permission denied" in lines[0].lower() and "locked" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["publish", "{ds}", "--repo", "org/x", "--dry-run"],
        ["eval", "word-retrieval", "--dataset", "org/xyz", "--model", "random", "--out", "{out}"],
    ],
    ids=["publish", "eval"],
)
def test_malformed_hf_endpoint_is_named_not_a_dropped_connection(argv, world, tmp_path):
    # huggingface_hub reads HF_ENDPOINT at import: a fresh process is the only honest test.
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_ENDPOINT="not a url", XLBENCH_CACHE=str(tmp_path / "cache"))
    env["HF_HOME"] = str(tmp_path / "hf")
    proc = subprocess.run(
        [sys.executable, "-m", "builders", *_fill(argv, world, str(tmp_path / "out"))],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr and proc.returncode == 2, proc.stderr
    lines = _error_lines(proc.stderr)
    assert len(lines) == 1 and "HF_ENDPOINT 'not a url' is not an http(s) URL" in lines[0], lines
    assert "dropped" not in proc.stderr and not (tmp_path / "out").exists()


_OTHER_FAMILIES = [
    ("alee_nulltext", "alee", _resealed(tf.set_cell("target_orig", None))),
    ("bucc_nulltext", "bucc", _resealed(tf.set_cell("text", None))),
    (
        "bucc_badgoldid",
        "bucc",
        lambda d: (
            tf.edit_split(d, f"{tf.PAIR}-gold", "test", tf.set_cell("src_id", "eng-nowhere")),
            tf.reseal(d),
        ),
    ),
    ("bucc_swapped", "bucc", _swap_train_test),
    ("bucc_zerotrain", "bucc", _zero_train),
]


def _poison(value, payload: str, at_root: bool = True):
    """Every string of a result (its split names too) replaced by ``payload``; scores kept numeric."""
    if isinstance(value, str):
        return payload
    if isinstance(value, list):
        return [_poison(v, payload, False) for v in value]
    if isinstance(value, dict):
        out = {k: _poison(v, payload, False) for k, v in value.items()}
        if at_root:
            out["evaluator"] = value["evaluator"]  # a known evaluator: its plots and export run
            out["scores"][payload] = out["scores"].get("test", [])
        return out
    return value


def _hostile_results(root: Path, ds: Path) -> Path:
    """One real result per :data:`HOSTILE` string, every string field of it replaced by that string."""
    import json

    scored = root / "scored"
    assert main(["eval", "word-retrieval", "--dataset", str(ds), "--model", "random", "--no-cache",
                 "--n", "8", "--no-plots", "--out", str(scored)]) == 0  # fmt: skip
    (src,) = scored.glob("*.json")
    data = json.loads(src.read_text(encoding="utf-8"))
    folder = root / "hostile"
    folder.mkdir()
    for i, text in enumerate(HOSTILE.values()):
        hostile = _poison(data, text.format(tmp=root))
        (folder / f"r{i}.json").write_text(json.dumps(hostile), encoding="utf-8")
    shutil.rmtree(scored)
    return folder


def _fill(argv: list[str], files: dict[str, str], out: str) -> list[str]:
    return [a.format(out=out, **files) for a in argv]


def _error_lines(err: str) -> list[str]:
    """stderr without argparse's usage block (``usage:`` and its indented continuation lines)."""
    lines, in_usage = [], False
    for line in err.splitlines():
        if line.startswith("usage:"):
            in_usage = True
            continue
        if in_usage and line.startswith(" "):
            continue
        in_usage = False
        if line.strip() and not line.startswith(("INFO", "DEBUG", "WARNING")):
            lines.append(line)
    return lines


def _case_id(param) -> str:
    argv = param.values[0] if hasattr(param, "values") else param[0]
    return " ".join(a for a in argv if a != "{out}" and a != "--out")[:90]


@pytest.mark.parametrize("argv, code, words", CASES, ids=[_case_id(c) for c in CASES])
def test_bad_input(argv, code, words, world, tmp_path, capsys, monkeypatch):
    import datasets

    datasets.disable_progress_bars()  # progress bars on stderr are not error lines
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    before = set(os.listdir(world["tmp"]))
    try:
        got = main(_fill(argv, world, str(out)))
    except SystemExit as exc:  # argparse
        got = exc.code
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and "Traceback" not in captured.out
    assert got == code, err
    lines = _error_lines(err)
    assert len(lines) == 1, f"expected one error line, got: {lines}"
    line = lines[0]
    assert "error:" in line, line
    for word in words:
        assert word.lower() in line.lower(), f"{word!r} not in {line!r}"
    assert not out.exists(), f"{out} was left behind"
    assert set(os.listdir(world["tmp"])) == before, "files were added beside the inputs"
    assert not [p for p in tmp_path.iterdir() if p.name != "out"], (
        "files were left in the working folder"
    )


@pytest.mark.parametrize(
    "argv", UNSAFE_CASES, ids=[" ".join(c[:2]) + " " + c[-1] for c in UNSAFE_CASES]
)
def test_hostile_result_fields(argv, world, tmp_path, capsys, monkeypatch):
    """Issue 27 item 1: a result's strings never write outside --out nor add markup."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "deep" / "er" / "out"
    before = set(os.listdir(world["tmp"]))
    assert main(_fill(argv, world, str(out))) == 0, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err
    assert set(os.listdir(world["tmp"])) == before, "files were added beside the inputs"
    assert [p.name for p in tmp_path.rglob("*") if not p.is_relative_to(out)] == ["deep", "er"]
    assert not list(tmp_path.parent.glob("*PWNED*"))
    for page in [*out.rglob("*.html"), *out.rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        if page.suffix == ".md":  # code spans show markup as text; a backslash escapes a tag
            text = re.sub(r"(`+).*?\1", "", text).replace("\\<", "")
        assert "<img src=x " not in text, page


def test_matrix_is_large_enough():
    assert len(CASES) >= 150


def test_folder_edited_in_place_and_scored_twice(tmp_path, capsys, monkeypatch):
    """Issue 27.3: the second eval of a folder edited in place refuses it; re-sealed, it scores the new rows."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tf.tiny_folder("cbd", tmp_path / "ds")
    argv = [*SR, "--dataset", str(folder), *M, "--no-plots"]
    out = tmp_path / "out"
    assert main(_fill(argv, {}, str(out))) == 0
    first = sorted(out.glob("*.json"))
    tf.edit_split(folder, tf.PAIR, "test", tf.set_cell("tgt_sentence", "an edited sentence"))
    capsys.readouterr()
    assert main(_fill(argv, {}, str(out))) == 2
    lines = _error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "manifest.json records" in lines[0], lines
    assert sorted(out.glob("*.json")) == first  # nothing written, nothing stale scored
    tf.reseal(folder)  # the edit made consistent: a new content id, and its rows are read
    assert main(_fill(argv, {}, str(out))) == 0
    assert len(sorted(out.glob("*.json"))) == 2


def test_same_folder_from_two_paths_is_the_same_result(tmp_path, monkeypatch):
    """Issue 27.7: a dataset's identity is its content id, not its path: rescoring a copy is no 'different result'."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    first = tf.tiny_folder("cbd", tmp_path / "a" / "ds")
    second = Path(shutil.copytree(first, tmp_path / "b" / "ds"))
    out = str(tmp_path / "out")
    assert main(_fill([*SR, "--dataset", str(first), *M, "--no-plots"], {}, out)) == 0
    assert main(_fill([*SR, "--dataset", str(second), *M, "--no-plots", "--rerun"], {}, out)) == 0
    assert len(list((tmp_path / "out").glob("*.json"))) == 1
