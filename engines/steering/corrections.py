"""Whether a reply after the diagnosis says the diagnosis was wrong, or that it was right.

A correction needs a clear negative about the answer ("wrong", "nope", "that's not it",
"it wasn't an OOM") or a stated other cause ("it was actually DNS", "the real cause is the
leak"). Thanks, acknowledgements, status chatter ("it's fixed now"), agreement and doubts
phrased as questions are not corrections: a lesson is only learned from a human's word that
the answer was wrong. A confirmation is the other way round and as strict: a plain "right",
"correct", "confirmed", "that was it", "spot on"; thanks, "ok", "fixed" and questions are
not, since a confirmation is what lets Reflexion's reflections on the incident become
lessons for the next ones.
"""

from __future__ import annotations

import re

from engines.steering.text import prepare

_NEGATIVE = re.compile(
    r"^(?:wrong|incorrect|nope|nah|no\b(?! worries| problem| prob)|not (?:quite|it|right|"
    r"really|the (?:root )?cause|that)|that'?s not (?:it|right|the (?:cause|problem))|this is "
    r"wrong|you'?re (?:off|wrong|mistaken)|disagree|i disagree|i don'?t think (?:that'?s|it'?s|"
    r"this is) (?:right|it|correct)|hmm,? i don'?t think|falsch|nein|non\b|não\b|nao\b|"
    r"no es (?:correcto|eso|así)|c'est faux|pas (?:ça|du tout)|errado|incorrecto|"
    r"wrong culprit|wrong cause|not (?:the|an?) \w+|close,? but|i don'?t buy (?:it|that)|"
    r"c'est pas [çc]a|ce n'est pas [çc]a|no es eso|das war es nicht|não foi isso|"
    r"i don'?t think so)",
    re.I,
)
_OTHER_CAUSE = re.compile(
    r"\b(?:(?:diagnosis|answer|this|that) is (?:wrong|incorrect|off)|^it was \w+|red herring|"
    r"(?:the )?(?:real|actual|root) (?:cause|problem|issue|culprit) (?:is|was)|"
    r"it was (?:actually|really)|it'?s actually|actually (?:it was|it'?s)|the (?:real|actual|"
    r"root) (?:cause|problem|issue|culprit) (?:is|was)|(?:it )?wasn'?t (?:an? |the )?\w+|"
    r"isn'?t (?:an? |the )?(?:oom|cause|problem)|is a (?:side effect|symptom)|was (?:only )?a "
    r"symptom|was only a symptom|not an? \w+\W+(?:it'?s|it was|read)|(?:fue|war|c'était|foi) "
    r"(?:el|la|das|der|die|le|la|o|a)\b)",
    re.I,
)
_NOT_ABOUT_IT = re.compile(r"^(?:wrong|sorry,? wrong) (?:thread|channel|chat)\b", re.I)
_AGREEMENT = re.compile(
    r"^(?:yes|yep|yeah|confirmed|correct|right|exactly|makes sense|agreed|\+1|great|thanks|"
    r"thank you|ty|thx|nice|cool|ok|okay|lgtm|good catch|spot on|it'?s fixed|fixed|resolved|"
    r"all good|we'?re good)\b",
    re.I,
)


def is_correction(text: str, bot_user_id: str | None = None) -> bool:
    """A clear negative about the diagnosis, or a stated other cause."""
    plain = prepare(text, bot_user_id).text.strip(" ,.!-—~")
    plain = re.sub(r"^(?:lol|hmm+|well|so|uh|um|actually,)\W+", "", plain)
    if not plain or _NOT_ABOUT_IT.match(plain):
        return False
    if _NEGATIVE.match(plain):
        return True
    if _AGREEMENT.match(plain):
        return False
    if plain.endswith("?") and not _OTHER_CAUSE.search(plain):
        return False
    return bool(_OTHER_CAUSE.search(plain))


_CONFIRMATION = re.compile(
    r"^(?:yes|yep|yeah|correct|right|confirmed|exactly|spot on|bingo|agreed|nailed it|"
    r"good catch|lgtm|that'?s (?:it|right|correct|the one)|that was (?:it|the cause|the problem)|"
    r"(?:this|that|the diagnosis) is (?:right|correct|it)|you'?re right|well spotted|"
    r"\+1|richtig|genau|exacto|correcto|c'est [çc]a|exact|certo|isso)"
    r"(?:[\s,.!]+(?:it was|that was it|thanks?|thank you|ty|good (?:job|catch)|"
    r"well done|nice|great))*$",
    re.I,
)


def is_confirmation(text: str, bot_user_id: str | None = None) -> bool:
    """A plain agreement that the diagnosis is right ("right", "correct, thanks"), nothing
    more: a "but", a question or any correction makes it something else."""
    plain = prepare(text, bot_user_id).text.strip(" ,.!-—~")
    if not plain or plain.endswith("?") or is_correction(text, bot_user_id):
        return False
    return bool(_CONFIRMATION.match(plain))
