"""Japanese analysis for interpretation: typed tokens from a morphological
analyser (SudachiPy), and word meaning from static word vectors.

``analyse(text)`` gives an `Analysis` of `Token` records (surface, lemma,
normalised form, reading, part of speech, conjugation form, offsets).  When
SudachiPy or its dictionary is missing the analysis is empty and every caller
falls back to surface matching.
"""
from .meaning import WordMeaning, word_meaning
from .sudachi import SudachiAnalyser, analyse, available
from .tokens import Analyser, Analysis, Token

__all__ = ["Analyser", "Analysis", "SudachiAnalyser", "Token", "WordMeaning", "analyse", "available",
           "word_meaning"]
