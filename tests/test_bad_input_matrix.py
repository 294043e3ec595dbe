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
import os
import shutil
from pathlib import Path

import pytest

from builders.cli import main

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
    (["list", "extra"], 2, ["unrecognized arguments"]),
    (["--bogus", "list"], 2, ["unrecognized arguments"]),
    # ---------------------------------------------------------------- build: common options
    ([*B, "cbd"], 2, ["--lang"]),
    ([*CBD[:-2], "--lang", "xx-yy"], 2, ["Unknown language code 'xx'"]),
    ([*CBD[:2], "--lang", "eng", "--out", "{out}"], 2, ["pair"]),
    ([*CBD[:2], "--lang", "eng-eng", "--out", "{out}"], 2, ["eng"]),
    ([*CBD[:2], "--lang", "", "--out", "{out}"], 2, ["language"]),
    ([*CBD[:2], "--lang", "eng-deu-fra", "--out", "{out}"], 2, ["pair"]),
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
    # ---------------------------------------------------------------- build silver
    ([*SILVER, "--src", "{missing}"], 2, ["does not exist"]),
    ([*SILVER, "--src", "{dir}"], 2, ["is a directory"]),
    ([*SILVER, "--src", "{latin1}"], 2, ["latin1.txt", "UTF-8"]),
    ([*SILVER, "--src", "{empty}"], 2, ["empty.txt"]),
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
    ([*WR, "--dataset", "{ds_badcard}", *M], 2, ["README.md", "UTF-8"]),
    ([*WR, "--dataset", "{ds_deepcard}", *M], 2, ["YAML", "nested"]),
    ([*WR, "--dataset", "{ds_badparquet}", *M], 2, ["parquet"]),
    ([*WR, "--dataset", "{ds_nocard}", *M], 2, ["no README.md"]),
    ([*SR, "--dataset", "{ds}"], 2, ["--model"]),
    ([*SR, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*SR, "--dataset", "{ds}", "--model", "hf:"], 2, ["hf:"]),
    ([*SR, "--dataset", "{ds}", *M, "--config", "nope"], 2, ["Config 'nope'"]),
    ([*SR, "--dataset", "{ds}", *M, "--batch-size", "0"], 2, ["--batch-size"]),
    ([*SR, "--dataset", "{ds_badparquet}", *M], 2, ["parquet"]),
    # ---------------------------------------------------------------- eval tacc, bucc, bitext-retrieval
    ([*TACC, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*TACC, "--dataset", "{ds}", *M], 2, ["alee"]),
    ([*TACC, "--dataset", "{dir}", *M], 2, ["not a built xlbench dataset"]),
    ([*TACC, "--dataset", "{ds}", *M, "--pooling", "max"], 2, ["invalid choice"]),
    ([*TACC, "--dataset", "{ds}", *M, "--role", "both"], 2, ["invalid choice"]),
    ([*EB, "--dataset", "{missing}", *M], 2, ["missing.txt"]),
    ([*EB, "--dataset", "{ds}", *M], 2, ["bucc"]),
    ([*EB, "--dataset", "{ds}", *M, "--k", "0"], 2, ["--k"]),
    ([*EB, "--dataset", "{ds}", *M, "--margin", "huge"], 2, ["invalid choice"]),
    ([*EB, "--dataset", "{ds}", *M, "--threshold", "x"], 2, ["invalid float value"]),
    (
        [*EB, "--dataset", "{ds}", *M, "--threshold", "1", "--threshold-from", "x"],
        2,
        ["not allowed with"],
    ),
    ([*BT, *M], 2, ["--src", "--dataset"]),
    ([*BT, "--src", "{missing}", "--tgt", "{missing}", *M], 2, ["does not exist"]),
    ([*BT, "--src", "{latin1}", "--tgt", "{latin1}", *M], 2, ["UTF-8"]),
    ([*BT, "--src", "{dir}", "--tgt", "{two_lines}", *M], 2, ["is a directory"]),
    ([*BT, "--src", "{two_lines}", "--tgt", "{three_lines}", *M], 2, ["lines"]),
    ([*BT, "--src", "{two_lines}", *M], 2, ["--tgt"]),
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
    ([*EA, *M, "--text", "{missing}", "--links", "{gold1}"], 2, ["does not exist"]),
    ([*EA, *M, "--text", "{latin1}", "--links", "{gold1}"], 2, ["UTF-8"]),
    ([*EA, *M, "--text", "{no_sep}", "--links", "{gold1}"], 2, ["source ||| target"]),
    ([*EA, *M, "--text", "{text}", "--links", "{latin1}"], 2, ["UTF-8"]),
    ([*EA, *M, "--silver", "{missing}"], 2, ["does not exist"]),
    ([*EA, *M, "--silver", "{empty_dir}"], 2, ["parallel.txt"]),
    ([*EA, *M, "--text", "{text}", "--method", "greedy"], 2, ["invalid choice"]),
    ([*AGS], 2, ["--pair"]),
    ([*AGS, "--pair", "xx-yy"], 2, ["xx"]),
    ([*AGS, "--pair", "eng-fra"], 2, ["Bad --pair field 'eng-fra'", "key=value"]),
    ([*AGS, "--pair", "name=x"], 2, ["silver", "dataset"]),
    ([*AGS, "--pair", "name=x,silver={missing}"], 2, ["missing.txt"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir}"], 2, ["parallel.txt"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir},gold_text={text}"], 2, ["gold_links"]),
    ([*AGS, "--pair", "name=x,silver={empty_dir}", "--methods", "giza"], 2, ["giza"]),
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
    # ---------------------------------------------------------------- publish
    (["publish", "{ds}"], 2, ["--repo"]),
    (["publish", "{missing}", "--repo", "org/x", "--dry-run"], 2, ["missing.txt"]),
    (["publish", "{dir}", "--repo", "org/x", "--dry-run"], 2, ["README.md"]),
    (["publish", "{ds}", "--repo", "not a repo", "--dry-run"], 2, ["not a repo"]),
    (["publish", "{ds}", "--repo", "org/x/y", "--dry-run"], 2, ["org/x/y"]),
    (["publish", "{ds_nocard}", "--repo", "org/x", "--dry-run"], 2, ["README.md"]),
    (["publish", "{ds_badparquet}", "--repo", "org/x", "--dry-run"], 1, ["parquet"]),
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
    put("two_lines.txt", "The dog runs .\nA cat sleeps .\n")
    put("three_lines.txt", "one\ntwo\nthree\n")
    put("text.txt", TEXT)
    put("no_sep.txt", "no separator here\n")
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
    # sqlite
    put("corrupt.sqlite", b"not a database " * 200, "corrupt_sqlite")
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
    ]:
        copy = root / name
        shutil.copytree(ds, copy)
        damage(copy)
        files[name] = str(copy)
    return files


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


def test_matrix_is_large_enough():
    assert len(CASES) >= 150
