"""Language codes: ISO 639-3 + ``_`` + ISO 15924 script (``deu_Latn``), as FLORES-200 does.

A pair is ``src-tgt`` (``eng_Latn-deu_Latn``) and is also the Hub config name.
Users may type the short forms (``deu``, ``de``, ``eng-deu``) or BCP-47 tags
(``pt-BR``, ``zh-TW``, ``sr-Latn``); :func:`parse_tag` is THE parser of one tag,
:func:`resolve_lang`, :func:`resolve_langs` and :func:`resolve_pair` turn tags into the
canonical form, and anything they cannot place raises
:class:`~evaluators.core.errors.LangCodeError` in one sentence (listing close matches).

One tag is a language subtag (ISO 639-1/2/3), then an optional ISO 15924 script and an
optional region, joined by ``-`` (BCP-47) or ``_`` (FLORES): ``pt-BR``, ``zh_Hant``,
``deu_Latn``. The region only picks the script (``zh-TW`` is Traditional, ``zh-CN``
Simplified) and is not kept: ``pt-BR`` and ``pt-PT`` are both ``por_Latn``, so a list
naming both is refused (:func:`resolve_langs`) rather than building one of them silently.

How a pair is split (:func:`split_pair`): ``_`` never separates two languages; each
``-``-separated part is read by its form, as BCP-47 writes it: four letters are a script
(``Latn``), two CAPITAL letters or three digits a region (``BR``, ``419``); anything else
starts the next language. So ``eng-pt_BR``, ``pt-BR-eng`` and ``en-zh-TW`` are pairs,
while ``pt-BR`` and ``zh-TW`` are ONE language each and are refused as a pair (not read
as Portuguese-Breton or Chinese-Twi); two-letter pairs are written in lower case
(``en-de``; ``EN-DE`` is English as used in Germany).

Which codes exist, their likely script and their names come from ``langcodes``
and its ``language_data`` package (the IANA language subtag registry, which
holds every ISO 639-1/639-3 code, and CLDR's likely subtags). Both are imported
lazily, so importing this module stays cheap. :data:`_OVERRIDES` and
:data:`_ALIASES` are the few places where xlbench's convention (FLORES-200's)
differs from what the library says; each entry says why.
Conversions to other conventions live only here.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evaluators.core.errors import LangCodeError

#: ISO 639-3 -> script, where CLDR's likely script is not the one FLORES-200 and
#: xlbench's data use.
_OVERRIDES: dict[str, str] = {
    # CLDR's likely script for Korean is "Kore" (Hangul + Han); FLORES-200, NTREX and
    # every Korean corpus xlbench reads label it kor_Hang.
    "kor": "Hang",
    # CLDR has no likely subtags for the Berber collective code and falls back to
    # English's Latn; xlbench's Tatoeba/LASER config has always been ber_Tfng.
    "ber": "Tfng",
}

#: Spellings mapped to another ISO 639-3 code before the library sees them.
_ALIASES: dict[str, str] = {
    # FLORES-200 names the individual language, not the macrolanguage: a user typing the
    # macrolanguage (or its 639-1 code) means the standard variety FLORES calls so.
    # langcodes keeps macrolanguages as they are, which would give ara_Arab, msa_Latn, ...
    "ara": "arb",
    "ar": "arb",
    "msa": "zsm",
    "may": "zsm",
    "ms": "zsm",
    "swa": "swh",
    "sw": "swh",
    "lav": "lvs",
    "lv": "lvs",
    "nor": "nob",
    "no": "nob",
    # xlbench has always read the 639-1 "zh" as Mandarin (cmn_Hans, BUCC's zh-en configs);
    # langcodes would give the macrolanguage zho. The 3-letter zho (FLORES, NTREX) stays zho.
    "zh": "cmn",
}

#: Languages written without spaces between words (extraction matches n-grams).
NO_SPACE_SCRIPTS = frozenset({"Hans", "Hant", "Jpan", "Thai", "Khmr", "Mymr", "Laoo", "Tibt"})

_CANON_RE = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")
# One language: a 2-3 letter language subtag, an optional script, an optional region.
# '_' and '-' are both accepted as separators (FLORES style and BCP-47).
_TAG_RE = re.compile(r"^([A-Za-z]{2,3})(?:[-_]([A-Za-z]{4}))?(?:[-_]([A-Za-z]{2}|[0-9]{3}))?$")
_PRIVATE_USE = re.compile(r"^q[a-t][a-z]$")


@functools.cache
def _lc() -> Any:
    """Import ``langcodes`` on first use (its data tables take ~50 ms to load)."""
    try:
        import langcodes
        from langcodes import data_dicts
    except ImportError as err:  # pragma: no cover - a declared base dependency
        raise LangCodeError(
            "Language codes need the 'langcodes' and 'language_data' packages; "
            "install them with: pip install langcodes language_data"
        ) from err
    return langcodes, data_dicts


def _registered(code: str) -> bool:
    """Whether ``code`` is a language subtag of the IANA registry with a name (not private use)."""
    langcodes, data = _lc()
    if not code or _PRIVATE_USE.match(code) or code == "und" or not data.VALIDITY.match(code):
        return False
    # Unnamed means unassigned: the registry's regex also admits reserved ranges.
    return not langcodes.Language.make(language=code).language_name().startswith("Unknown language")


@functools.lru_cache(maxsize=4096)
def _base_iso3(subtag: str) -> str | None:
    """Return the ISO 639-3 code of a language subtag, or ``None`` when it is not a language.

    A registered 3-letter code is kept as typed (``prs`` stays Dari although CLDR
    folds it into ``fa-AF``); 2-letter codes, ISO 639-2/B codes (``ger``) and
    overlong ones (``deu`` is registered as ``de``) go through the library.
    """
    langcodes, _ = _lc()
    sub = subtag.lower()
    sub = _ALIASES.get(sub, sub)
    if len(sub) == 3 and _registered(sub):
        return sub
    try:
        lang = langcodes.Language.get(sub).language
    except (ValueError, LookupError):
        return None
    if not lang or not _registered(lang):
        return None
    try:
        # No alias here: zho and chi normalise to "zh" but mean the macrolanguage zho.
        return langcodes.Language.get(lang).to_alpha3()
    except LookupError:
        return None


def _likely_script(iso: str, region: str | None) -> str:
    """Return the script a text in ``iso`` (as used in ``region``) is most likely written in."""
    if iso in _OVERRIDES:
        return _OVERRIDES[iso]
    langcodes, _ = _lc()
    tag = langcodes.Language.get(iso)
    if region:
        # zh-TW -> Hant, zh-CN -> Hans; an unknown region (NTREX's gsw-ZH) is ignored.
        with_region = langcodes.Language.make(language=tag.language, territory=region.upper())
        if with_region.is_valid():
            tag = with_region
    # CLDR's likely subtags; languages without data fall back to 'und' = Latn, the
    # script of most of the world's less documented languages.
    return tag.maximize().script or "Latn"


@functools.cache
def _known_codes() -> tuple[str, ...]:
    """Every ISO 639-3 code the registry names (about 8,000), sorted."""
    from language_data.name_data import CODE_TO_NAMES

    out = set()
    for key in CODE_TO_NAMES:
        if key.isalpha() and key.islower() and 2 <= len(key) <= 3:
            iso = _base_iso3(key)
            if iso:
                out.add(iso)
    return tuple(sorted(out))


def _population(iso: str) -> int:
    langcodes, _ = _lc()
    try:
        return langcodes.Language.get(iso).speaking_population()
    except (ImportError, LookupError, ValueError):
        return 0


def _edits(word: str) -> set[str]:
    """Strings one edit (delete, swap, replace, insert) away from ``word``."""
    letters = string.ascii_lowercase
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    return out


def suggest(code: str, n: int = 4) -> list[str]:
    """Return up to ``n`` known languages close to an unknown ``code``, most likely first.

    Candidates are the codes one edit away (``deux`` -> ``deu``) and, for a typed
    language name, the code of that name (``german`` -> ``deu``); they are ranked by
    number of speakers (CLDR), so a common language comes before an obscure one
    that is equally close.

    >>> suggest("deux")[0], suggest("German")[0], suggest("zzul")[0]
    ('deu', 'deu', 'zul')
    """
    word = code.strip().lower()
    found: dict[str, None] = {}
    if len(word) > 3 and word.isalpha():
        langcodes, _ = _lc()
        try:
            iso = _base_iso3(langcodes.find(word).language)
        except LookupError:
            iso = None
        if iso:
            found[iso] = None
    near = {iso for cand in _edits(word) if 2 <= len(cand) <= 3 and (iso := _base_iso3(cand))}
    near.discard(word)
    for iso in sorted(near, key=lambda c: (-_population(c), c)):
        found.setdefault(iso, None)
    return list(found)[:n]


def _did_you_mean(code: str) -> str:
    langcodes, _ = _lc()
    close = suggest(code)
    if not close:
        return ""
    named = [f"{c} ({langcodes.Language.get(c).language_name()})" for c in close]
    return f" Did you mean {', '.join(named)}?"


@dataclass(frozen=True)
class LangTag:
    """One language tag as parsed: ISO 639-3 language, ISO 15924 script, the region if typed.

    Attributes:
        iso: the ISO 639-3 code (FLORES-200's individual language, see ``_ALIASES``).
        script: the script, as typed or the likely one (for the region when given).
        region: the region subtag as typed in capitals (``BR``), or ``None``.
        typed: what the user typed.
    """

    iso: str
    script: str
    region: str | None
    typed: str

    @property
    def code(self) -> str:
        """The canonical ``xxx_Scrp`` code (the region is not part of it)."""
        return f"{self.iso}_{self.script}"


def parse_tag(code: str) -> LangTag:
    """Parse ONE language tag (ISO 639-1/2/3, ``xxx_Scrp``, BCP-47 with script and/or region).

    >>> parse_tag("pt-BR")
    LangTag(iso='por', script='Latn', region='BR', typed='pt-BR')
    >>> parse_tag("zh-TW").code, parse_tag("zh-CN").code, parse_tag("zh_Hant").code
    ('cmn_Hant', 'cmn_Hans', 'cmn_Hant')

    Raises:
        LangCodeError: not one tag this parser can place (an unknown language or script,
            extensions and variants such as ``en-US-x-twain``); the message lists close matches.
    """
    if not isinstance(code, str) or not code.strip():
        raise LangCodeError(f"Expected a language code such as 'deu' or 'deu_Latn', got {code!r}.")
    raw = code.strip()
    match = _TAG_RE.match(raw)
    base = _base_iso3(match.group(1)) if match else None
    if match is None or base is None:
        head = re.split(r"[-_]", raw, maxsplit=1)[0]
        raise LangCodeError(
            f"Unknown language code {raw!r}: use ISO 639-3 (+ ISO 15924 script) such as "
            f"'deu' or 'deu_Latn', or a BCP-47 tag such as 'pt-BR'.{_did_you_mean(head)}"
        )
    script_tag, region = match.group(2), match.group(3)
    if script_tag:
        script_tag = script_tag[:1].upper() + script_tag[1:].lower()
        _, data = _lc()
        if script_tag not in data.ALL_SCRIPTS:
            raise LangCodeError(
                f"Unknown script {script_tag!r} in {raw!r}: use an ISO 15924 code such as "
                f"Latn, Cyrl, Arab, Hans, Hant, Jpan."
            )
    region = region.upper() if region else None
    return LangTag(base, script_tag or _likely_script(base, region), region, raw)


def resolve_lang(code: str) -> str:
    """Return the canonical ``xxx_Scrp`` code for any accepted spelling (see :func:`parse_tag`).

    Accepts the canonical form, ISO 639-3, ISO 639-1, ISO 639-2/B, ``xxx-Scrp`` /
    ``xx_Scrp`` variants and BCP-47 tags with a region (the region only picks the
    script: ``zh-TW`` is written in Hant; it is not kept).

    >>> resolve_lang("deu"), resolve_lang("de"), resolve_lang("zho_Hant"), resolve_lang("cze")
    ('deu_Latn', 'deu_Latn', 'zho_Hant', 'ces_Latn')
    >>> resolve_lang("pt-BR"), resolve_lang("zh-TW"), resolve_lang("sr-Latn"), resolve_lang("zul")
    ('por_Latn', 'cmn_Hant', 'srp_Latn', 'zul_Latn')

    Raises:
        LangCodeError: the code is not a known language; the message lists close matches.
    """
    return parse_tag(code).code


def resolve_langs(codes: Iterable[str], option: str = "--langs") -> list[str]:
    """Resolve a list of languages, refusing two entries that name the same canonical code.

    Locale variants (``pt_BR``, ``pt_PT``) are one ``xxx_Scrp`` code, hence one config:
    building one and dropping the other silently would be wrong, so the list is refused.

    >>> resolve_langs(["de", "zh-TW", "zh-CN"])
    ['deu_Latn', 'cmn_Hant', 'cmn_Hans']

    Raises:
        LangCodeError: an unknown code, or two entries naming one language and script.
    """
    seen: dict[str, str] = {}
    for typed in codes:
        code = resolve_lang(typed)
        if code in seen:
            first = seen[code]
            why = (
                f"{option} lists {typed!r} twice"
                if first.strip() == typed.strip()
                else f"{option} lists {first!r} and {typed!r}, which are both {code}, one config "
                f"(xlbench's codes name a language and its script, never a region)"
            )
            raise LangCodeError(f"{why}; keep one of them.")
        seen[code] = typed
    return list(seen)


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


_SCRIPT_PART = re.compile(r"^[A-Za-z]{4}$")
_REGION_PART = re.compile(r"^(?:[A-Z]{2}|[0-9]{3})$")


def pair_sides(config: str) -> tuple[str, str]:
    """Name the two sides of a config for progress lines: its languages, else ``<config> source/target``.

    >>> pair_sides("deu_Latn-eng_Latn"), pair_sides("files")
    (('deu_Latn', 'eng_Latn'), ('files source', 'files target'))
    """
    try:
        return split_pair(config)
    except LangCodeError:
        return f"{config} source", f"{config} target"


def split_pair(pair: str) -> tuple[str, str]:
    """Split a typed pair into its two language tags (the rule is in the module docstring).

    >>> split_pair("eng-deu"), split_pair("eng-pt_BR"), split_pair("pt-BR-en")
    (('eng', 'deu'), ('eng', 'pt_BR'), ('pt-BR', 'en'))
    >>> split_pair("en-zh-Hant-TW"), split_pair("eng-Latn-deu-Latn")
    (('en', 'zh-Hant-TW'), ('eng-Latn', 'deu-Latn'))

    Raises:
        LangCodeError: not exactly two languages (``pt-BR`` is one: Portuguese as used in Brazil).
    """
    text = (pair or "").strip() if isinstance(pair, str) else ""
    sides: list[list[str]] = []
    for part in text.split("-"):
        joins = bool(sides) and "_" not in part
        if joins and (_SCRIPT_PART.match(part) or _REGION_PART.match(part)):
            sides[-1].append(part)  # a script or region belongs to the language before it
        else:
            sides.append([part])
    tags = ["-".join(side) for side in sides]
    if len(tags) == 2 and all(tags):
        return tags[0], tags[1]
    if len(tags) == 1 and len(sides[0]) > 1:
        raise LangCodeError(
            f"{text!r} is one language ({_describe(text)}), not a pair; join two languages with "
            f"'-' and a side's own subtags with '_', e.g. 'eng-{text.replace('-', '_')}' "
            f"(two-letter pairs in lower case: 'en-de')."
        )
    raise LangCodeError(
        f"Expected a language pair like 'eng-deu', 'eng_Latn-deu_Latn' or 'eng-pt_BR', got {pair!r}"
        + (f" ({len(tags)} languages)." if len(tags) > 2 else ".")
    )


def _describe(tag: str) -> str:
    """Name a tag in words for a message (``Portuguese, region BR``), or ``unknown``."""
    try:
        parsed = parse_tag(tag)
    except LangCodeError:
        return "an unknown code"
    where = f", region {parsed.region}" if parsed.region else ""
    return f"{language_name(parsed.code)} in {script_name(parsed.code)} script{where}"


def resolve_pair(pair: str) -> tuple[str, str]:
    """Resolve a user-typed pair (``eng-deu``, ``en-de``, ``eng_Latn-deu_Latn``, ``eng-pt_BR``).

    >>> resolve_pair("eng-deu")
    ('eng_Latn', 'deu_Latn')
    >>> resolve_pair("eng_Latn-cmn_Hans"), resolve_pair("en-zh-TW")
    (('eng_Latn', 'cmn_Hans'), ('eng_Latn', 'cmn_Hant'))

    Raises:
        LangCodeError: the pair is not two tags (:func:`split_pair`), a code is unknown,
            or both sides are one language.
    """
    left, right = split_pair(pair)
    src, tgt = resolve_lang(left), resolve_lang(right)
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

    An individual language of a macrolanguage gets the macrolanguage's 639-1 code
    when it is the one CLDR treats as its standard variety (``arb`` -> ``ar``,
    ``cmn`` -> ``zh``), as the Hub and ISO 639-1 tools expect.

    >>> to_card_language("deu_Latn"), to_card_language("ceb_Latn"), to_card_language("arb_Arab")
    ('de', 'ceb', 'ar')
    """
    base = iso3(code)
    langcodes, _ = _lc()
    lang = langcodes.Language.get(base).prefer_macrolanguage().language or base
    return lang if len(lang) == 2 else base


def language_name(code: str) -> str:
    """Return the English name of a language (CLDR's, via langcodes).

    >>> language_name("fra_Latn"), language_name("zul_Latn"), language_name("prs_Arab")
    ('French', 'Zulu', 'Dari')
    """
    langcodes, _ = _lc()
    base = iso3(code)
    # make() keeps a registered code as it is: get() would name Dari (prs) "Persian".
    name = langcodes.Language.make(language=base).language_name()
    return langcodes.Language.get(base).language_name() if name.startswith("Unknown") else name


def script_name(code: str) -> str:
    """Return the English name of a code's script.

    >>> script_name("srp_Cyrl")
    'Cyrillic'
    """
    langcodes, _ = _lc()
    return langcodes.Language.make(script=script(code)).script_name()


def known_languages() -> list[str]:
    """Return every language of the registry in canonical form with its likely script, sorted."""
    return sorted(f"{iso}_{_likely_script(iso, None)}" for iso in _known_codes())
