"""The deterministic reading of a reply: clause by clause, with the cluster's names.

Each clause is read for what it asks (stop, pause, read-only, a fact, a ruled-out cause, an
exclusion, a focus, a time window) and what it names (namespaces and workloads from the
vocabulary, tools, data sources, kinds of fault, components). A clause that names things but
asks nothing takes the previous clause's ask ("skip kube-system and monitoring"). The reading
says whether it is sure: a clause that looks like an instruction but matches no kind is
unsure, and a configured model then reads the reply (`engines.steering.model_reader`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast

from engines.constraints import Constraint, ConstraintInbox, ConstraintKind
from engines.steering import lexicon as lx
from engines.steering.names import Names, find_names, only_names
from engines.steering.text import clauses, prepare
from engines.steering.times import find_window
from engines.steering.vocabulary import Vocabulary

Intent = Literal["exclude", "focus", "rule_out", ""]
# "fact?": a statement that is a fact only when nothing else is asked (the reason otherwise).
_Kind = ConstraintKind | Literal["fact?"]
_CONTRAST = re.compile(r"^(?:not|no|nicht|pas|não|no es)\b(?! just| only| nur| solo| seulement)")
_NOT_ONLY = re.compile(r"^not (?:just|only|even)\b")
_OWN_MESSAGE = re.compile(r"\b(?:my|the) (?:last|previous|earlier) (?:message|reply|comment)\b")
_IGNORE_THEM = re.compile(r"^(?:so |and )?(?:ignore|disregard) (?:them|those|these|it|that)$")
_STOP_BY = re.compile(r"\bstop by\b")
_WHOLE_QUESTION = re.compile(
    r"^(?:why|how come|what makes you|what made you|por ?qu[eé]|warum|pourquoi|por que)\b"
    r"[^.;!\n]*\?$")
_SHORT = 4  # a clause of at most this many words may take the previous clause's ask
_LEADING = re.compile(r"^(?:and|but|then|also|so|plus|y|und|et|e|mais|pero|aber|mas|ok|okay)\s+")
_UNSKIP = re.compile(r"\b(?:don'?t|do not) (?:skip|ignore|exclude|forget)\b")
_NO_NEED = re.compile(r"\bno need to (?:stay out of|skip|avoid|exclude|ignore)\b")
_PRONOUN_EXCLUDE = re.compile(r"^(?:so |and )?(?:ignore|skip|drop|forget) (?:it|them)$|"
                              r"^don'?t (?:chase|bother with) (?:it|them)$|^don'?t bother$")
_PRONOUN_BAN_ONE = re.compile(r"^(?:so )?(?:don'?t|do not) (?:use|touch|query) (?:it|them)$")
_PRONOUN_RULED_OUT = re.compile(r"^(?:c'est pas [çc]a|ce n'est pas [çc]a|it'?s not (?:that|it)|"
                                r"that'?s not it|no es eso|das ist es nicht|não é isso)$")
_PRONOUN_BAN = re.compile(r"\b(?:don'?t (?:use|run|call) (?:it|them)|skip (?:it|them)|"
                          r"(?:is|are) not useful|drop (?:it|them)|ban (?:it|them))\b")
_UNKNOWN_RULED_OUT = re.compile(
    r"^(?:(?:it'?s|it is|its) )?not (?:the |a |an )?(?P<thing>[a-z][a-z0-9-]*?)(?:s)?$")
_CATEGORY_FIRST = re.compile(r"^(?:not|no|kein\w*|pas|não|nao)\s(?!even\b)")
_PAST = re.compile(r"\b(?:[a-z]{3,}ed|went|hit|rose|fell|began|broke|kept|got|was|were|"
                   r"has been|have been|keeps?|is at|are at|hits)\b")
_NUMBERISH = re.compile(r"\d")
# "rewind to step 2", "roll back to step 3", "go back to step 2": the investigation, not a
# workload (a rollout's "roll back checkout" names no step).
_REWIND = re.compile(
    r"\b(?:rewind|roll(?:ed)?[ -]?back|go(?:ing)? back|back ?track|revert|return|restart|"
    r"start (?:again|over)|continue|carry on|zurück|revenir|retour|volver|vuelve|voltar)"
    r"\s+(?:(?:to|from|after|zu|à|a|al|ao)\s+)?(?:the\s+end\s+of\s+)?(?:l'|la\s+|el\s+|o\s+)?"
    r"(?:step|schritt|étape|etape|paso|passo)\s*#?(?P<step>\d{1,3})\b"
    r"|^rewind\s+(?:to\s+)?#?(?P<bare>\d{1,3})\b")
WINDOW_MARK = " ⟨window⟩ "
# "ignore the redis warnings": a kind of evidence is noise. Not an exclusion of whatever the
# words name, not a ruled-out cause: a rule the model follows (and the analyzer demotes).
# Another team's word that their side looks healthy ("authz team says their pods are fine"):
# a fact to weigh, not a human ruling the cause out. Healthy pods and green dashboards do not
# clear a certificate, a config or a capacity fault; "it's not X" still rules X out.
_REPORTED_HEALTH = re.compile(
    r"\b(?:says?|said|claims?|reports?|tells? us|told us|confirm(?:s|ed)?)\b(?:(?!\bnot\b|n't).)*"
    r"\b(?:healthy|fine|green|ok|okay|normal|look good)\b", re.I)
_NOISE = re.compile(
    r"^(?:please\s+|pls\s+)?(?:ignore|disregard|don'?t worry about|never mind|nevermind|"
    r"forget(?: about)?|ignora|ignoriere?|ignore[sz]?)\s+(?:the\s+|those\s+|these\s+|all\s+"
    r"(?:the\s+)?|los\s+|las\s+|die\s+|les\s+|os\s+|as\s+)?(?P<topic>.*?\b(?:" +
    lx.SIGNAL_NOUNS.pattern + r"))(?:\s.*)?$")


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reply asks for. `confident` is False when some clause looked like an
    instruction the rules could not type; `resume` lifts a pause ("go on")."""

    constraints: tuple[Constraint, ...] = ()
    question: bool = False
    confident: bool = True
    resume: bool = False
    to_someone_else: bool = False

    def as_json(self) -> dict[str, object]:
        return {"constraints": [{"kind": c.kind, "value": c.value} for c in self.constraints],
                "question": self.question}


def _ruled_out(clause: str, names: Names) -> str | None:
    """The value of a rule_out: category, workload, component, or category:component."""
    categories = [c for c, p in lx.CATEGORY_WORDS.items() if p.search(clause)]
    components = [*names.workloads, *names.namespaces]
    if not components:
        components = [c for c, p in lx.COMPONENT_WORDS.items() if p.search(clause)]
    if "bad_rollout" in categories and names.workloads and \
            re.search(r"\bdeploy(?:ment)?s?\b", clause) and not re.search(
                r"\b(?:rollout|release|deploy(?:ed)? (?:at|of)|last deploy|new version)\b",
                clause):
        categories.remove("bad_rollout")  # "the checkout deployment" names a workload
    if categories and components:
        return f"{categories[0]}:{components[0]}"
    if categories:
        return categories[0]
    if components:
        return components[0]
    return None


def _read_clause(clause: str, vocab: Vocabulary, carry: Intent, previous_clause: str,
                 carry_names: list[tuple[str, str]], carry_sources: list[str],
                 had_window: bool = False) -> tuple[list[tuple[_Kind, str]], Intent, bool,
                                                bool, bool]:
    """(kinds and values, the clause's intent, question, sure, resume)."""
    clause = _LEADING.sub("", clause)
    requested = lx.REQUEST_PREFIX.match(clause)
    if requested:
        clause = clause[requested.end():]
    names = find_names(clause, vocab)
    asked = not requested and ("?" in clause or bool(lx.WH_START.match(clause)))
    if lx.POLITENESS.match(clause.strip(" !.,")) or _OWN_MESSAGE.search(clause):
        return [], "", False, True, False
    if rewind := _REWIND.search(clause):
        return [("rewind", rewind["step"] or rewind["bare"])], "", False, True, False
    if lx.PAUSE_STRONG.search(clause):
        return [("pause", "")], "", False, True, False
    if lx.NOT_STOP.search(clause):
        return [], "", asked, True, True
    if lx.WRITES.search(clause):
        return [("forbid_writes", "")], "", False, True, False
    if lx.PAUSE_STRONG.search(clause):
        return [("pause", "")], "", False, True, False
    if _NO_NEED.search(clause):
        return [], "", False, True, False
    if (lx.STOP.match(clause) or lx.STOP_ANYWHERE.search(clause)) and not _STOP_BY.search(clause):
        return [("stop", "")], "", False, True, False
    if lx.WH_START.match(clause) and not requested:
        return [], "", True, True, False
    if lx.CHATTER_START.match(clause):
        return [], "", False, True, False
    if _PRONOUN_EXCLUDE.match(clause) and carry_names:
        return [*_exclusions(carry_names)], "", False, True, False
    if _PRONOUN_BAN_ONE.match(clause) and carry_sources:
        return [("exclude_source", s) for s in carry_sources], "", False, True, False
    if _PRONOUN_RULED_OUT.match(clause) and carry_names:
        return [("rule_out", name) for _, name in carry_names], "", False, True, False
    if _NOISE.match(clause) or _IGNORE_THEM.match(clause):
        return [("rule", clause)], "", False, True, False
    if _NOT_ONLY.match(clause):
        return [], "", False, True, False
    if _CATEGORY_FIRST.match(clause) and _ruled_out_words(clause) and not names.sources:
        value = _ruled_out(clause, names)
        if value:
            return [("rule_out", value)], "rule_out", False, True, False
    if (lx.FACT.search(clause) or (names.any() and _REPORTED_HEALTH.search(clause))) and \
            not lx.EXCLUDE.match(clause):
        return [("fact", clause)], "", False, True, False
    if lx.FACT_WEAK.search(clause) and not lx.EXCLUDE.search(clause) and \
            not lx.RULE_OUT.search(clause):
        return [("fact?", clause)], "", False, True, False
    found: list[tuple[_Kind, str]] = []
    if _CATEGORY_FIRST.match(clause) and any(p.search(clause)
                                             for p in lx.CATEGORY_WORDS.values()):
        value = _ruled_out(clause, names)
        if value:
            return [("rule_out", value)], "rule_out", False, True, False
    if (unknown := _UNKNOWN_RULED_OUT.match(clause)) and not names.any() \
            and not _ruled_out_words(clause):
        return [("rule_out", unknown["thing"])], "rule_out", False, True, False
    ruled = lx.RULE_OUT.search(clause)
    excluded = lx.EXCLUDE.search(clause)
    if ruled and excluded and excluded.start() < ruled.start():
        ruled = None  # "ne regarde pas le namespace X": an exclusion said with "pas le"
    if ruled and not (names.sources and not names.workloads
                      and not _ruled_out_words(clause)):
        value = _ruled_out(clause, names)
        if value:
            return [("rule_out", value)], "rule_out", False, True, False
    intent: Intent = ""
    if _UNSKIP.search(clause) and names.any():
        intent = "focus"
    elif lx.EXCLUDE.search(clause) or (_CONTRAST.match(clause) and names.any()):
        intent = "exclude"
    elif lx.FOCUS.search(clause):
        intent = "focus"
    elif names.any() and carry and len(clause.split()) <= _SHORT and only_names(clause, names):
        contrast = bool(_CONTRAST.match(previous_clause)) and carry == "exclude"
        intent = "focus" if contrast else carry
    elif names.any() and only_names(clause, names):
        intent = "focus"  # "auth-service logs since 03:00"
    if intent == "exclude":
        found += [("ban_tool", t) for t in names.tools]
        found += [("rule_out", n) for n in names.signal_names]
        found += [("exclude_namespace", n) for n in names.namespaces
                  if n not in names.signal_names]
        found += [("exclude_workload", w) for w in names.workloads
                  if w not in names.signal_names]
        if not (names.namespaces or names.workloads) or not names.signal_names:
            found += [("exclude_source", s) for s in names.sources
                      if not (names.signal_names and s == "logs")]
    elif intent == "focus":
        found += [("focus_namespace", n) for n in names.namespaces]
        found += [("focus_workload", w) for w in names.workloads]
        found += [("focus_source", s) for s in names.sources]
    elif intent == "rule_out":
        value = _ruled_out(clause, names)
        if value:
            found.append(("rule_out", value))
    if found:
        return found, intent, asked and not found, True, False
    if lx.PAUSE.search(clause) and len(clause.split()) <= 8 and not asked:
        return [("pause", "")], "", False, True, False
    if asked:
        return [], "", True, True, False
    if lx.ACKNOWLEDGE.match(clause) or not clause.strip():
        return [], "", False, True, False
    if (lx.IMPERATIVE.match(clause) or requested) and len(clause.split()) > 2 \
            and not had_window:
        return [("rule", clause)], "", False, True, False
    if WINDOW_MARK.strip() not in clause and _PAST.search(clause) and (
            _NUMBERISH.search(clause) or names.any() or len(clause.split()) >= 4):
        return [("fact?", clause)], "", False, True, False
    bare_ask = bool(lx.FOCUS.fullmatch(clause) or lx.FOCUS.fullmatch(clause.rsplit(" ", 1)[0]))
    return [], "", False, bare_ask or not (names.any() or lx.EXCLUDE.search(clause)
                                           or lx.FOCUS.search(clause)), False


def _exclusions(names: list[tuple[str, str]]) -> list[tuple[_Kind, str]]:
    return [("exclude_namespace" if kind == "namespace" else "exclude_workload", name)
            for kind, name in names]


def _ruled_out_words(clause: str) -> bool:
    return any(p.search(clause) for p in (*lx.CATEGORY_WORDS.values(),
                                          *lx.COMPONENT_WORDS.values()))


def read_reply(text: str, vocab: Vocabulary, *, author: str = "", reply: str = "",
               bot_user_id: str | None = None) -> Reading:
    """Everything the rules understand in `text`, typed, and whether they are sure."""
    prepared = prepare(text, bot_user_id)
    if prepared.to_someone_else:
        return Reading(to_someone_else=True)
    plain = prepared.text
    if _WHOLE_QUESTION.match(plain):  # "why patient-api and not appointment-svc?"
        return Reading(question=True)
    found: list[tuple[_Kind, str]] = []
    window = find_window(plain)
    if window is not None:
        start, end = window[1]
        plain = f"{plain[:start]}{WINDOW_MARK}{plain[end:]}"
    question, sure, resume = False, True, False
    carry: Intent = ""
    previous = ""
    pieces = clauses(plain)
    if pieces and re.match(r"^(?:can|could) (?:someone|anyone)|^anyone\b|^someone\b", pieces[0]):
        return Reading()  # asked of the humans in the thread
    named: list[tuple[str, str]] = []
    sources: list[str] = []
    for index, clause in enumerate(pieces):
        following = pieces[index + 1] if index + 1 < len(pieces) else ""
        if not carry and _CONTRAST.match(following) and len(clause.split()) <= _SHORT:
            carry = "focus"  # "metrics, not logs"
        plain_clause = clause.replace(WINDOW_MARK.strip(), " ").strip()
        kinds, intent, asked, clause_sure, clause_resume = _read_clause(
            plain_clause, vocab, carry, previous, named, sources,
            had_window=WINDOW_MARK.strip() in clause)
        seen = find_names(plain_clause, vocab)
        sources = seen.sources or sources
        named = [] if seen.signal_names else [
            *(("namespace", n) for n in seen.namespaces),
            *(("workload", w) for w in seen.workloads)] or named
        if window is not None and WINDOW_MARK.strip() in clause and \
                not any(kind in ("fact", "fact?") for kind, _ in kinds):
            found.append(("time_window", window[0]))
            clause_sure = True
        found += kinds
        question = question or asked
        sure = sure and clause_sure
        resume = resume or clause_resume
        carry = intent or (carry if not kinds else "")
        previous = clause
    if question or any(kind != "pause" for kind, _ in found):
        found = [(k, v) for k, v in found if k != "pause" or "pause" in plain
                 or "hold" in plain]
    if _PRONOUN_BAN.search(plain):
        found += [("ban_tool", t) for t in dict.fromkeys(
            name for piece in pieces for name in find_names(piece, vocab).tools)]
    if "```" in text and not found:  # pasted output is what the human sees: a fact
        found.append(("fact", plain))
    weak = [item for item in found if item[0] == "fact?"]
    found = [item for item in found if item[0] != "fact?"]
    if weak and not any(kind != "fact" for kind, _ in found):
        found.append(("fact", " ".join(v for _, v in weak)))
    facts = [v for kind, v in found if kind == "fact"]
    if len(facts) > 1:  # one reply's facts are one fact
        found = [item for item in found if item[0] != "fact"] + [("fact", "; ".join(facts))]
    unique = [(kind, value) for kind, value in dict.fromkeys(found) if kind != "fact?"]
    return Reading(
        tuple(Constraint(cast(ConstraintKind, kind), text, value, author, reply)
              for kind, value in unique),
        question=question, confident=sure, resume=resume,
    )


def put_reply(inbox: ConstraintInbox, text: str, vocab: Vocabulary | None = None, *,
              author: str = "", reply: str = "") -> Reading:
    """Read `text` with the rules and put what it asks into `inbox` (harnesses and scripted
    interventions, which have no model and no thread to answer in)."""
    reading = read_reply(text, vocab or Vocabulary.of(), author=author, reply=reply)
    for constraint in reading.constraints:
        inbox.put(constraint)
    return reading
