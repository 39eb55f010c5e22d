"""The policies of the authored answer, in the order the arbiter asks them (answering.py): the tab, a pick,
a call, the player's own matter, a reply to a question, sympathy and praise, follow-ups, a settled choice, a
fact confirmed, what a character knows, a topic recalled, forms, honest answers, reactions, news, the player's
own life, echoes, chatter, the honest don't-know, the fallback."""
from __future__ import annotations

from ..answering import Policy
from . import (
    call,
    chatter,
    confirm,
    echo,
    fallback,
    follow,
    form,
    knowledge,
    matter,
    pick,
    react,
    recall,
    reply,
    tab,
    unsure,
)

ORDER: tuple[tuple[str, Policy], ...] = (
    ("tab", tab.money),
    ("pick", pick.picked),
    ("call", call.called),
    ("own_matter", matter.own_matter),
    ("reply", reply.answer_to_question),
    ("sad_news", react.sad_news),
    ("praise", react.praise_of_someone),
    ("pointer", follow.pointer),
    ("choice_again", pick.asked_again_),
    ("confirmed", confirm.confirmed),
    ("knowledge", knowledge.knowledge),
    ("topic_again", recall.topic_again),
    ("follow_up", follow.follow_up),
    ("own_word", follow.own_word),
    ("form", form.known_form),
    ("unsure_self", unsure.about_self),
    ("unsure_other", unsure.about_other),
    ("react", react.to_the_act),
    ("news", recall.news),
    ("own_life", react.own_life),
    ("echo", echo.echo),
    ("chatter", chatter.small_talk),
    ("dont_know", react.unanswerable),
    ("fallback", fallback.fallback),
)
