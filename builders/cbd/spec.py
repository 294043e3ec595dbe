"""Constants of the contextual-dictionary builder. Each one shapes the rows, so each goes into the manifest."""

from __future__ import annotations

#: Pairs kept per split by default after extraction. The paper samples 5,000
#: pairs per evaluation (Gaschi et al. 2022, Section IV.B); 20,000 leaves room
#: for 10 repeated samples that overlap little, and keeps the folder small.
DEFAULT_MAX_PAIRS = 20_000

#: Default statistical aligner of the baseline split (Table II compares the
#: dictionary method with fast_align; eflomal is the stronger alternative).
DEFAULT_ALIGNER = "fast_align"
ALIGNERS = ("fast_align", "eflomal", "none")

#: Symmetrisation of the aligner's two directions (Och & Ney 2003; the usual
#: Moses default, as in the paper's fast_align baseline).
SYMMETRIZATION = "grow-diag-final-and"

#: Licence of the offline default: public-domain Bible texts x FreeDict (GPL/AGPL
#: dictionaries; the extracted word pairs are facts, the sentences public domain).
#: Users who pass their own corpus set the licence of their data themselves.
DEFAULT_LICENSE = "cc-by-sa-4.0"
