"""alee builder: AMR-edited English foils, NLI-validated, paired with any language."""
