"""Language codes: ISO 639-3 + ``_`` + ISO 15924 script (``deu_Latn``), as FLORES-200 does.

A pair is ``src-tgt`` (``eng_Latn-deu_Latn``) and is also the Hub config name.
Users may type the short forms (``deu``, ``de``, ``eng-deu``); :func:`resolve_lang`
and :func:`resolve_pair` turn them into the canonical form, and an unknown code
raises :class:`~evaluators.errors.LangCodeError` listing close matches.
Conversions to other conventions live only here.
"""

from __future__ import annotations

import re

from evaluators.errors import LangCodeError, did_you_mean

# ISO 639-3 -> (default ISO 15924 script, ISO 639-1 or "", English name).
# Covers FLORES-200's high/mid-resource languages, every Tatoeba (LASER) and
# NTREX-128 language used by xlbench, and the BUCC/PAWS-X/XNLI languages.
_TABLE: dict[str, tuple[str, str, str]] = {
    "afr": ("Latn", "af", "Afrikaans"), "amh": ("Ethi", "am", "Amharic"),
    "ang": ("Latn", "", "Old English"), "arb": ("Arab", "ar", "Arabic"),
    "arq": ("Arab", "", "Algerian Arabic"), "arz": ("Arab", "", "Egyptian Arabic"),
    "ast": ("Latn", "", "Asturian"), "awa": ("Deva", "", "Awadhi"),
    "aze": ("Latn", "az", "Azerbaijani"), "bak": ("Cyrl", "ba", "Bashkir"),
    "bel": ("Cyrl", "be", "Belarusian"), "ben": ("Beng", "bn", "Bengali"),
    "ber": ("Tfng", "", "Berber"), "bos": ("Latn", "bs", "Bosnian"),
    "bre": ("Latn", "br", "Breton"), "bul": ("Cyrl", "bg", "Bulgarian"),
    "cat": ("Latn", "ca", "Catalan"), "cbk": ("Latn", "", "Chavacano"),
    "ceb": ("Latn", "", "Cebuano"), "ces": ("Latn", "cs", "Czech"),
    "cha": ("Latn", "ch", "Chamorro"), "cmn": ("Hans", "zh", "Mandarin Chinese"),
    "cor": ("Latn", "kw", "Cornish"), "csb": ("Latn", "", "Kashubian"),
    "cym": ("Latn", "cy", "Welsh"), "dan": ("Latn", "da", "Danish"),
    "deu": ("Latn", "de", "German"), "dsb": ("Latn", "", "Lower Sorbian"),
    "dtp": ("Latn", "", "Kadazan Dusun"), "ell": ("Grek", "el", "Greek"),
    "eng": ("Latn", "en", "English"), "epo": ("Latn", "eo", "Esperanto"),
    "est": ("Latn", "et", "Estonian"), "eus": ("Latn", "eu", "Basque"),
    "fao": ("Latn", "fo", "Faroese"), "fas": ("Arab", "fa", "Persian"),
    "fil": ("Latn", "", "Filipino"), "fin": ("Latn", "fi", "Finnish"),
    "fra": ("Latn", "fr", "French"), "fry": ("Latn", "fy", "Western Frisian"),
    "gla": ("Latn", "gd", "Scottish Gaelic"), "gle": ("Latn", "ga", "Irish"),
    "glg": ("Latn", "gl", "Galician"), "grc": ("Grek", "", "Ancient Greek"),
    "gsw": ("Latn", "", "Swiss German"), "guj": ("Gujr", "gu", "Gujarati"),
    "hau": ("Latn", "ha", "Hausa"), "heb": ("Hebr", "he", "Hebrew"),
    "hin": ("Deva", "hi", "Hindi"), "hrv": ("Latn", "hr", "Croatian"),
    "hsb": ("Latn", "", "Upper Sorbian"), "hun": ("Latn", "hu", "Hungarian"),
    "hye": ("Armn", "hy", "Armenian"), "ido": ("Latn", "io", "Ido"),
    "ile": ("Latn", "ie", "Interlingue"), "ina": ("Latn", "ia", "Interlingua"),
    "ind": ("Latn", "id", "Indonesian"), "isl": ("Latn", "is", "Icelandic"),
    "ita": ("Latn", "it", "Italian"), "jav": ("Latn", "jv", "Javanese"),
    "jpn": ("Jpan", "ja", "Japanese"), "kab": ("Latn", "", "Kabyle"),
    "kat": ("Geor", "ka", "Georgian"), "kaz": ("Cyrl", "kk", "Kazakh"),
    "khm": ("Khmr", "km", "Khmer"), "kor": ("Hang", "ko", "Korean"),
    "kur": ("Latn", "ku", "Kurdish"), "kzj": ("Latn", "", "Coastal Kadazan"),
    "lat": ("Latn", "la", "Latin"), "lfn": ("Latn", "", "Lingua Franca Nova"),
    "lit": ("Latn", "lt", "Lithuanian"), "lvs": ("Latn", "lv", "Standard Latvian"),
    "mal": ("Mlym", "ml", "Malayalam"), "mar": ("Deva", "mr", "Marathi"),
    "max": ("Latn", "", "North Moluccan Malay"), "mhr": ("Cyrl", "", "Eastern Mari"),
    "mkd": ("Cyrl", "mk", "Macedonian"), "mon": ("Cyrl", "mn", "Mongolian"),
    "mya": ("Mymr", "my", "Burmese"), "nds": ("Latn", "", "Low German"),
    "nld": ("Latn", "nl", "Dutch"), "nno": ("Latn", "nn", "Norwegian Nynorsk"),
    "nob": ("Latn", "nb", "Norwegian Bokmal"), "nov": ("Latn", "", "Novial"),
    "oci": ("Latn", "oc", "Occitan"), "orv": ("Cyrl", "", "Old Russian"),
    "pam": ("Latn", "", "Pampanga"), "pes": ("Arab", "", "Iranian Persian"),
    "pms": ("Latn", "", "Piedmontese"), "pol": ("Latn", "pl", "Polish"),
    "por": ("Latn", "pt", "Portuguese"), "ron": ("Latn", "ro", "Romanian"),
    "rus": ("Cyrl", "ru", "Russian"), "slk": ("Latn", "sk", "Slovak"),
    "slv": ("Latn", "sl", "Slovenian"), "spa": ("Latn", "es", "Spanish"),
    "sqi": ("Latn", "sq", "Albanian"), "srp": ("Cyrl", "sr", "Serbian"),
    "swe": ("Latn", "sv", "Swedish"), "swg": ("Latn", "", "Swabian"),
    "swh": ("Latn", "sw", "Swahili"), "tam": ("Taml", "ta", "Tamil"),
    "tat": ("Cyrl", "tt", "Tatar"), "tel": ("Telu", "te", "Telugu"),
    "tgl": ("Latn", "tl", "Tagalog"), "tha": ("Thai", "th", "Thai"),
    "tuk": ("Latn", "tk", "Turkmen"), "tur": ("Latn", "tr", "Turkish"),
    "tzl": ("Latn", "", "Talossan"), "uig": ("Arab", "ug", "Uyghur"),
    "ukr": ("Cyrl", "uk", "Ukrainian"), "urd": ("Arab", "ur", "Urdu"),
    "uzb": ("Latn", "uz", "Uzbek"), "vie": ("Latn", "vi", "Vietnamese"),
    "war": ("Latn", "", "Waray"), "wuu": ("Hans", "", "Wu Chinese"),
    "xho": ("Latn", "xh", "Xhosa"), "yid": ("Hebr", "yi", "Yiddish"),
    "yor": ("Latn", "yo", "Yoruba"), "yue": ("Hant", "", "Cantonese"),
    "zho": ("Hans", "", "Chinese"), "zsm": ("Latn", "ms", "Standard Malay"),
}

# ISO 639-2/B bibliographic codes and other legacy spellings seen in the wild
# (SilverAlign's folders use ``cze`` and ``per``).
_ALIASES: dict[str, str] = {
    "cze": "ces", "ger": "deu", "fre": "fra", "per": "fas", "chi": "zho",
    "gre": "ell", "rum": "ron", "dut": "nld", "alb": "sqi", "arm": "hye",
    "baq": "eus", "bur": "mya", "geo": "kat", "ice": "isl", "mac": "mkd",
    "may": "zsm", "wel": "cym", "slo": "slk", "ara": "arb", "msa": "zsm",
    "swa": "swh", "nor": "nob", "lav": "lvs", "tib": "bod",
}

_SCRIPTS = frozenset(
    "Latn Cyrl Arab Hans Hant Jpan Hang Deva Beng Grek Hebr Ethi Thai Geor Armn "
    "Taml Telu Mlym Gujr Khmr Mymr Tfng Guru Orya Knda Sinh Tibt Laoo".split()
)
_ISO1 = {iso1: code for code, (_, iso1, _) in _TABLE.items() if iso1}
_CANON_RE = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")

#: Languages written without spaces between words (extraction matches n-grams).
NO_SPACE_SCRIPTS = frozenset({"Hans", "Hant", "Jpan", "Thai", "Khmr", "Mymr", "Laoo", "Tibt"})


def _suggest(code: str) -> str:
    known = sorted(set(_TABLE) | set(_ALIASES) | set(_ISO1))
    return did_you_mean(code.lower(), known, n=4, cutoff=0.5)


def resolve_lang(code: str) -> str:
    """Return the canonical ``xxx_Scrp`` code for any accepted spelling.

    Accepts the canonical form, ISO 639-3, ISO 639-1, ISO 639-2/B and
    ``xxx-Scrp`` / ``xx_Scrp`` variants.

    >>> resolve_lang("deu"), resolve_lang("de"), resolve_lang("zho_Hant"), resolve_lang("cze")
    ('deu_Latn', 'deu_Latn', 'zho_Hant', 'ces_Latn')

    Raises:
        LangCodeError: the code is not a known language; the message lists close matches.
    """
    if not isinstance(code, str) or not code.strip():
        raise LangCodeError(f"Expected a language code such as 'deu' or 'deu_Latn', got {code!r}.")
    raw = code.strip()
    base, script = re.split(r"[_-]", raw, maxsplit=1) if re.search(r"[_-]", raw) else (raw, "")
    base = base.lower()
    base = _ALIASES.get(base, _ISO1.get(base, base))
    if base not in _TABLE:
        raise LangCodeError(
            f"Unknown language code {raw!r}: use ISO 639-3 (+ ISO 15924 script) such as "
            f"'deu' or 'deu_Latn' (table in evaluators/schema/langs.py).{_suggest(base)}"
        )
    if script:
        script = script[:1].upper() + script[1:].lower()
        if script not in _SCRIPTS:
            raise LangCodeError(
                f"Unknown script {script!r} in {raw!r}: use an ISO 15924 code such as "
                f"Latn, Cyrl, Arab, Hans, Hant, Jpan."
            )
    return f"{base}_{script or _TABLE[base][0]}"


def check_lang(code: str) -> str:
    """Check that ``code`` is already canonical and return it.

    >>> check_lang("eng_Latn")
    'eng_Latn'

    Raises:
        LangCodeError: the code is not in canonical ``xxx_Scrp`` form or unknown.
    """
    if not isinstance(code, str) or not _CANON_RE.match(code):
        raise LangCodeError(
            f"Expected a canonical language code like 'deu_Latn', got {code!r}; "
            f"resolve short forms with resolve_lang()."
        )
    resolve_lang(code)
    return code


def resolve_pair(pair: str) -> tuple[str, str]:
    """Resolve a user-typed pair (``eng-deu``, ``en-de``, ``eng_Latn-deu_Latn``).

    >>> resolve_pair("eng-deu")
    ('eng_Latn', 'deu_Latn')
    >>> resolve_pair("eng_Latn-cmn_Hans")
    ('eng_Latn', 'cmn_Hans')

    Raises:
        LangCodeError: the pair is not two codes joined by ``-`` or a code is unknown.
    """
    text = (pair or "").strip()
    # Canonical codes contain '_', short ones don't, so '-' splits the pair either way
    # unless a short code carries a script with '-' (eng-Latn-deu-Latn).
    parts = text.split("-")
    if len(parts) == 4:
        parts = [f"{parts[0]}_{parts[1]}", f"{parts[2]}_{parts[3]}"]
    if len(parts) != 2 or not all(parts):
        raise LangCodeError(
            f"Expected a language pair like 'eng-deu' or 'eng_Latn-deu_Latn', got {pair!r}."
        )
    src, tgt = resolve_lang(parts[0]), resolve_lang(parts[1])
    if src == tgt:
        raise LangCodeError(f"A pair needs two different languages, got {pair!r}.")
    return src, tgt


def pair_config(src: str, tgt: str) -> str:
    """Return the config name of a pair.

    >>> pair_config("eng_Latn", "deu_Latn")
    'eng_Latn-deu_Latn'
    """
    return f"{check_lang(src)}-{check_lang(tgt)}"


def iso3(code: str) -> str:
    """Return the ISO 639-3 part of a canonical code.

    >>> iso3("deu_Latn")
    'deu'
    """
    return check_lang(code).split("_")[0]


def script(code: str) -> str:
    """Return the ISO 15924 script of a canonical code.

    >>> script("cmn_Hans")
    'Hans'
    """
    return check_lang(code).split("_")[1]


def to_card_language(code: str) -> str:
    """Return the code the Hub card's ``language:`` list expects (ISO 639-1 if any, else 639-3).

    >>> to_card_language("deu_Latn"), to_card_language("ceb_Latn")
    ('de', 'ceb')
    """
    base = iso3(code)
    return _TABLE[base][1] or base


def language_name(code: str) -> str:
    """Return the English name of a language.

    >>> language_name("fra_Latn")
    'French'
    """
    return _TABLE[iso3(code)][2]


def known_languages() -> list[str]:
    """Return every canonical code in the table, sorted."""
    return sorted(f"{k}_{v[0]}" for k, v in _TABLE.items())
