"""Which knowledge entry answers a line best, read with its focus (focus.py).

An entry fits a line by its `words` found in it — more when a word is the noun the question is about (its
head), or longer (誰の曲 says more than 曲) — and, for an entry of facts `about` a character, only when the
line is about that character (named, or the one asked when the line names nobody).  A general entry (no
`about`) fits less when the line is about a person.  Entries of the topic the line was read as fit a little
without any word (the topic's own lines).

`best_fact` is what the turn logic asks before letting a topic word move the story: a fact about a character
the line asks about (「ママのお名前は？」 → ママ's name, not the shop's), or an entry whose word is the question's
head where the topic's word is not (「今かかってるの誰の曲？」 → the record playing, not the music topic's line).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from ..answers import Answerer
from ..interpret.asking import WH
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG
from ..interpret.lexicon import compiled
from ..interpret.negated import declined_after, denied_after
from ..interpret.owners import owner_named, said_of_person, said_of_thing
from ..interpret.text import TextForms, WordHit, make_matcher, nfkc
from ..scenario import GameState, PlayerInput
from ..scenario.loader import CompiledKnowledge
from ..scenario.variation import knowledge_key
from .choices import closed
from .elsewhere import other_places
from .focus import Focus
from .undone import treat_undone

WORD = 1.0          # a word of the entry found in the line
LONGER = 0.15       # ... per character beyond the first (up to LONGEST)
LONGEST = 5
AT_HEAD = 1.5       # ... times this when it is the noun the question is about
IN_PHRASE = 1.2     # ... or this when it modifies that noun (今かかってるの誰の曲)
ASIDE = 0.6         # ... or this when it is in another sentence than the one that asks
MORE = 0.15         # each further word of the entry found
ABOUT = 1.0         # the line is about the character the entry's facts are about
NOT_ABOUT = 0.6     # a general entry, for a line about a person
TOPIC = 0.5         # an entry of the topic the line was read as (its words found or not)
FACT_MIN = 2.0      # a fact about a character answers before a topic when it fits at least this
# The object or subject particle right after a topic's word (曲を変えてみたら？): the verb is about that word.
_OBJECT_PARTICLE = compiled("conversation", "entries_object_particle")


@dataclass(frozen=True)
class Fitting:
    person: str
    entry: CompiledKnowledge
    score: float
    hit: WordHit | None            # its best word found in the line
    about: bool                    # a fact about the character the line is about
    at_head: bool                  # its best word is the question's head (or its wh-word)
    at_wh: bool = False            # one of its words holds the question's wh-word (いつから, 何歳)

    @property
    def ref(self) -> str:
        return f"knowledge/{self.person}/{self.entry.index}"


_GRAMMAR = (TAG.particle, TAG.auxiliary, TAG.supplementary_symbol)


def _grammar_only(text: str, start: int, end: int) -> bool:
    """Whether a word found at start..end is spelled only by particles and endings there (だし of
    「寝てるだけだし」 is だ + し, not the broth): no word of an entry."""
    tokens = [t for t in analyse(text).tokens if t.start < end and t.end > start]
    return bool(tokens) and all(t.pos[:1] and t.pos[0] in _GRAMMAR for t in tokens)


class Entries:
    def __init__(self, answerer: Answerer) -> None:
        self.answerer = answerer
        self.rules = answerer.rules
        self.names = answerer.names
        self.matcher = make_matcher()
        self.own_places = tuple(nfkc(n) for place in self.names.places.values() for n in place.names)

    def rank(self, focus: Focus, forms: TextForms, people: Iterable[str], state: GameState, *,
             intent: str | None = None, asked: str | None = None, last: str | None = None,
             recent: TextForms | None = None, changing: bool = False) -> list[Fitting]:
        """Entries of `people` that fit the line, best first (`asked`: the one spoken to, who answers a
        close call; `last`: who spoke last, whom a question naming nobody may be about too; `intent`: the
        topic the line was read as; `recent`: the exchange just before the line, which may name the subject of
        an entry's words; `changing`: the line took something back, a choice may change)."""
        subjects = focus.subjects(asked, (last,) if last else ())
        shown = state.shown
        wanted = PlayerInput.intent(intent) if intent is not None else None
        out: list[Fitting] = []
        # (「角のコンビニ、遅くまでやってる？」 asks about another place: only an entry that speaks of it answers)
        elsewhere = other_places(focus.text, self.own_places)
        for person in people:
            for entry in self.answerer.entries_of(person):
                if elsewhere and not speaks_of(entry, elsewhere):
                    continue
                if entry.entry.choice is not None and \
                        closed(entry, self.answerer.entries_of(person), state, focus.text, changing):
                    continue      # a settled choice, or a line that does not choose (choices.py)
                of_topic = intent is not None and intent in entry.intents and \
                    entry.condition.holds(wanted, shown, None, False, False)
                hits = self._hits(forms, entry, recent)
                if entry.entry.about:
                    # 「ママは葵さんの夢知ってる？」: a word said to be another's (葵さんの夢) is no word of a fact
                    # about this one (ママ's own dream)
                    hits = [h for h in hits if owner_named(forms.nfkc, h.start, self.names) in (None, *entry.entry.about)]
                if not hits and (not of_topic or entry.entry.choice is not None):
                    continue      # (an option is chosen by its words, never by the topic alone)
                if not of_topic and not entry.condition.holds_for_intent(shown):
                    continue
                fitting = self._fit(person, entry, hits, focus, subjects, of_topic)
                if fitting is not None:
                    out.append(fitting)
        if focus.view and any(f.about and f.hit is not None and set(f.entry.entry.about) & set(focus.about) for f in out):
            # 「ママはどう思う？葵ちゃんのこと」: what ママ knows of 葵 answers, not her view of something else
            out = [f for f in out if not (f.about and not set(f.entry.entry.about) & set(focus.about))]
        if any(f.hit is not None and _holds_head(focus, f.hit) for f in out):
            # 「タイトルなんていうの？」: an entry holding the head noun (タイトル) before one holding only the wh-word
            # (the name entry's なんていう)
            out = [f if f.hit is None or _holds_head(focus, f.hit) else dataclasses.replace(f, at_wh=False)
                   for f in out]
        uses = {f.ref: len(state.variation.get(knowledge_key(f.person, f.entry.index), ())) for f in out}
        # an entry that holds what the question asks with (いつから, 何時) before one that only names its topic
        out.sort(key=lambda f: (not f.at_wh, -(f.score + (0.3 if f.person == asked else 0.0)), uses[f.ref],
                                f.entry.index))
        return out

    def _hits(self, forms: TextForms, entry: CompiledKnowledge, recent: TextForms | None = None) -> list[WordHit]:
        owned = frozenset().union(*(self.answerer.owned_words(i) for i in entry.intents))
        # (a word whose report is denied, 「混ぜてもいいなんて言ってないよ」, names the opposite of the entry; a
        # thing declined, 「花束はいらない」, is not asked about)
        return [h for h in self.answerer.word_hits(forms, entry, recent)
                if not _grammar_only(forms.nfkc, h.start, h.end)
                and not declined_after(forms.nfkc, h.end)
                and not (h.word in owned and (said_of_person(forms.nfkc, h.start, self.names) or
                                              said_of_thing(forms.nfkc, h.start, self.names)))
                and not denied_after(forms.nfkc, h.end) and not treat_undone(forms.nfkc, h.start, h.end)]

    def _fit(self, person: str, entry: CompiledKnowledge, hits: list[WordHit], focus: Focus,
             subjects: tuple[str, ...], of_topic: bool) -> Fitting | None:
        best, best_hit, at_head = 0.0, None, False
        # (an entry holding the head noun itself may take the wh-word after it: 「名前なんていうの？」)
        holds_head = any(focus.at_head(h.start, h.end) for h in hits)
        for hit in hits:
            weight = WORD + LONGER * (min(len(hit.word), LONGEST) - 1)
            # (a wh-word asked of another head noun is not this word's: 「タイトルなんていうの？」 asks the title, and
            # the name entry's なんていう holds only the wh-word)
            head = focus.at_head(hit.start, hit.end) or (focus.at_wh(hit.start, hit.end) and not focus.wh_modifies_head
                                                         and (holds_head or not self._of_other_head(focus, hit)))
            if head:
                weight *= AT_HEAD
            elif focus.in_phrase(hit.start, hit.end):
                weight *= IN_PHRASE
            elif not focus.in_sentence(hit.start, hit.end):
                weight *= ASIDE
            if weight > best:
                best, best_hit, at_head = weight, hit, head
        score = best + MORE * max(0, len({h.word for h in hits}) - 1)
        about = False
        if entry.entry.about:
            if not hits or not set(entry.entry.about) & set(subjects) or not (focus.question or focus.request):
                return None      # (a fact answers a question or a request; 「いい名前じゃん」 only says)
            if focus.head is not None and focus.question and not at_head and not focus.light_head:
                return None      # 「なんていう歌手？」 asks about a singer, not about the name of the one asked
            about = True
            # what the line asks about the character is in the sentence that asks, not in one said before
            score += ABOUT if best_hit is not None and focus.in_sentence(best_hit.start, best_hit.end) else ABOUT / 2
        elif subjects and focus.about and not focus.thing:
            score *= NOT_ABOUT
        if of_topic:
            score += TOPIC
        at_wh = any(focus.at_wh(h.start, h.end) for h in hits) and not focus.wh_modifies_head
        return Fitting(person, entry, score, best_hit, about, at_head, at_wh)

    @staticmethod
    def _of_other_head(focus: Focus, hit: WordHit) -> bool:
        """Whether the question's head is a content noun before the wh-word that `hit` holds, which `hit` does not
        reach: what is asked is that noun's (タイトル), not the entry's word's (名前)."""
        return focus.head is not None and focus.head[1] <= hit.start and not focus.light_head and \
            focus.head_word is not None and not WH.match(focus.head_word)

    def best_fact(self, focus: Focus, forms: TextForms, people: Iterable[str], state: GameState,
                  asked: str | None, topic: PlayerInput | None, last: str | None = None,
                  recent: TextForms | None = None) -> Fitting | None:
        """The entry that answers the line instead of the topic it was read as (see the module's doc), or
        None when the topic stands."""
        ranked = self.rank(focus, forms, people, state, asked=asked, last=last, recent=recent)
        if not ranked:
            return None
        best = ranked[0]
        if best.about and best.score >= FACT_MIN:
            return best
        if topic is None or not topic.is_intent or best.hit is None or \
                not focus.in_phrase(best.hit.start, best.hit.end):
            return None
        if best.entry.intents:
            return None      # an entry of a topic: which topic the line is about is the interpreter's (and clarify's)
        # the entry names the question's head and the topic does not (このナポリタンの隠し味: 隠し味, not
        # ナポリタン); else the entry's words in the question's phrase say more of it than the topic's
        words = self.rules.scenario.intents[topic.target_id].words
        entry_hits = self._hits(forms, best.entry, recent)
        # a topic word inside one of the entry's (味 in 隠し味) is not the topic named
        topic_hits = [h for h in self.matcher.hits(forms, words)
                      if not any(e.start <= h.start and h.end <= e.end and (e.end - e.start) > (h.end - h.start)
                                 for e in entry_hits)]
        # (with no head noun, the verb the question ends on is what it asks: 「料理は誰に習ったの？」 → 習う)
        entry_head = any(focus.at_head(h.start, h.end) or focus.at_predicate(h.start, h.end) for h in entry_hits)
        # (a topic word the predicate takes as its object, 「曲を変えてみたら？」, is what the verb is about)
        topic_head = any(focus.at_head(h.start, h.end) or focus.at_predicate(h.start, h.end) or
                         (focus.predicate is not None and _OBJECT_PARTICLE.match(focus.text[h.end:h.end + 1]))
                         for h in topic_hits)
        if entry_head and not topic_head:
            return best
        return best if self._strength(entry_hits, focus) > self._strength(topic_hits, focus) else None

    @staticmethod
    def _strength(hits: list[WordHit], focus: Focus) -> float:
        """The characters of the words found in the question's phrase (overlaps counted once)."""
        covered: set[int] = set()
        for hit in hits:
            if focus.in_phrase(hit.start, hit.end):
                covered.update(range(hit.start, hit.end))
        return float(len(covered))


def _holds_head(focus: Focus, hit: WordHit) -> bool:
    """Whether `hit` reaches the question's head noun from its start, not as a piece of it joined to what follows
    (the 前何 of 「名前何ていうの」 is no word of 名前)."""
    if not focus.at_head(hit.start, hit.end) or focus.head is None:
        return False
    return not (focus.head[0] < hit.start < focus.head[1] < hit.end)


def speaks_of(entry: CompiledKnowledge, words: Iterable[str]) -> bool:
    """Whether the entry's info, words or lines name one of `words`."""
    own = " ".join([entry.entry.info, *entry.entry.words, *(line.text for line in entry.entry.lines)])
    return any(word in own for word in words)
