import pytest

from evaluators.errors import LangCodeError
from evaluators.schema.langs import (
    check_lang,
    known_languages,
    pair_config,
    resolve_lang,
    resolve_pair,
    to_card_language,
)


@pytest.mark.parametrize(
    "typed,canonical",
    [
        ("deu", "deu_Latn"),
        ("de", "deu_Latn"),
        ("DEU", "deu_Latn"),
        ("deu_Latn", "deu_Latn"),
        ("deu-Latn", "deu_Latn"),
        ("cmn_Hans", "cmn_Hans"),
        ("zho_hant", "zho_Hant"),
        ("cze", "ces_Latn"),
        ("per", "fas_Arab"),
        ("ja", "jpn_Jpan"),
    ],
)
def test_resolve_lang_accepts_user_spellings(typed, canonical):
    assert resolve_lang(typed) == canonical


def test_unknown_code_lists_close_matches():
    with pytest.raises(LangCodeError) as err:
        resolve_lang("deux")
    msg = str(err.value)
    assert "Unknown language code 'deux'" in msg and "Did you mean" in msg and "deu" in msg


def test_unknown_script_is_named():
    with pytest.raises(LangCodeError, match="Unknown script 'Xxxx'"):
        resolve_lang("deu_Xxxx")


def test_resolve_pair_short_and_canonical():
    assert resolve_pair("eng-deu") == ("eng_Latn", "deu_Latn")
    assert resolve_pair("en-de") == ("eng_Latn", "deu_Latn")
    assert resolve_pair("eng_Latn-cmn_Hans") == ("eng_Latn", "cmn_Hans")
    assert resolve_pair("eng-Latn-deu-Latn") == ("eng_Latn", "deu_Latn")


@pytest.mark.parametrize("bad", ["eng", "eng-deu-fra", "", "eng-eng", "-deu"])
def test_resolve_pair_rejects_bad_pairs(bad):
    with pytest.raises(LangCodeError):
        resolve_pair(bad)


def test_check_lang_requires_canonical_form():
    assert check_lang("eng_Latn") == "eng_Latn"
    with pytest.raises(LangCodeError, match="canonical"):
        check_lang("eng")
    with pytest.raises(LangCodeError):
        check_lang("qqq_Latn")


def test_pair_config_and_card_codes():
    assert pair_config("eng_Latn", "deu_Latn") == "eng_Latn-deu_Latn"
    assert to_card_language("eng_Latn") == "en"
    assert to_card_language("ceb_Latn") == "ceb"


def test_table_is_consistent():
    langs = known_languages()
    assert len(langs) == len(set(langs)) > 100
    for code in langs:
        assert resolve_lang(code) == code
