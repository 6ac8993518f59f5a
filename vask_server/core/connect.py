"""Questions about what connects to a note: "which ideas from the last three months connect to
[[Launch Tidepool app]]?", "anything similar to this note?", "¿qué se relaciona con [[Dal]]?".

Such a question names a *seed*: the note whose connections are wanted, not a place to search in. A
question is one only when three things hold, so that no phrase alone makes it one:
- it **asks for things**: the last asking word before the relation is one that asks for notes or
  things ("what", "which", "where", "anything", "any notes", "other", "qué", "welche", "quelles",
  "哪些", …), not one that asks how, why, when, or whether ("how does [[X]] help with back pain?",
  "do I like [[Pizza Place]]?", "is [[X]] related to [[Y]]?" are read as written: [[X]] a scope);
- a **relation** links those things to the seed: "connect to", "related to", "relevant to", "builds
  on", "reminds me of", "similar to", "like", "could help (me) with", "about the same ideas as",
  "applied ideas from", and their Spanish forms; right before a `[[Note]]` only, "illustrates",
  "examples of", "instead of", "alternatives to", "alongside", "could help me <verb>";
- the **seed** follows the relation (or comes before "remind me of", "relate to", "connect to",
  "help (with)", "build on" after "does/could/…": "what does [[X]] remind me of?"): a `[[Note]]`, or
  "this", "this note", "this (old) project", "the note I have open", "the snippet I'm reading", "esta
  nota" for the note open in Obsidian.
German, French, Chinese and Japanese forms alike: "verbunden mit [[X]]", "lié à [[X]]", and, with the
relation after the note, "与[[X]]相关", "和[[X]]有关的", "[[X]]に関連する", "这篇笔记" / "このノート" (there
the things asked for may follow: "…的想法", "…するノート").

Not every such question is only about other notes. A seed that plays a role ("what can [[X]] help
with?", "what does [[X]] build on?") is what the question is about: it is read as written, unless it
asks for others ("where else could this book help?"). And "what could help with [[Back pain]]?" may
be answered by Back pain itself: for a role the seed fills ("help with", "instead of", "examples of",
"illustrates", "applied ideas from") the answer keeps the seed's best passages first (`keeps_seed`; a
named seed only, the open note being in view already), unless the question says "else" or "other".
For likeness ("connect", "relate", "similar", "remind", "builds on", …) the seed is left out. Any
other `[[Note]]` limits where to search, as before ("in [[X]]", "according to [[X]]").
Pure: finding the words only; which note they name is resolved by the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vask_server.core.time.words import MONTH_NAMES, SEASONS, WEEKDAYS

_PHRASE = (
    r"(?:connect(?:s|ed|ing)?|connections?|linked)\s+(?:to|with)"
    r"|relat(?:e|es|ed|ing)\s+to|relevant\s+(?:to|for)|builds?\s+on|building\s+on|built\s+on"
    r"|reminds?\s+(?:me|you)\s+of|similar\s+to|(?:like|alike)\s+(?=\[\[)"
    r"|(?:do|does|doing)\s+the\s+same\s+(?:job|thing|work)\s+as|same\s+as|overlaps?\s+with"
    r"|(?:could|can|might|would)\s+help\s+(?:me\s+|us\s+)?(?:with|on|(?!(?:in|at|from|to|for|about|of|by)\s)[^\W\d_]+(?=\s+(?:my\s+|the\s+)?\[\[))"
    r"|(?:is|are)?\s*about\s+the\s+same\s+(?:ideas?|things?|topics?|subjects?|themes?)\s+as|same\s+ideas\s+as"
    r"|(?:applied|used|put\s+into\s+practice)\s+(?:the\s+|my\s+)?"
    r"(?:ideas?|lessons?|advice|principles?|methods?|techniques?)\s+(?:from|in|of)"
    # (only before a [[Note]]: "how do I illustrate this?", "an example of this?" name no note)
    r"|(?:illustrates|illustrating|examples?\s+of|instead\s+of|alternatives?\s+(?:to|for)|alongside)"
    r"(?=\s*(?:(?:the|my)\s+)?\[\[)"
    r"|(?:se\s+)?relaciona(?:n|do|da|dos|das)?\s+con|conecta(?:n|do|da|dos|das)?\s+con|tiene(?:n)?\s+que\s+ver\s+con"
    r"|parecid[oa]s?\s+a|se\s+parece(?:n)?\s+a|similar(?:es)?\s+a|relevantes?\s+para|me\s+recuerda(?:n)?(?:\s+a)?"
    r"|(?:podr[ií]a|puede)n?\s+ayudar(?:me)?\s+(?:con|a|en)"
    r"|verbunden\s+mit|(?:im\s+)?zusammenhang\s+mit|verwandt\s+mit|(?:ähnlich|aehnlich)\s+(?:wie|zu)|passt\s+zu"
    r"|bezieht\s+sich\s+auf|erinnert\s+(?:mich\s+)?an"
    r"|li[ée]e?s?\s+(?:à|a|avec)|reli[ée]e?s?\s+(?:à|a)|en\s+(?:lien|rapport)\s+avec|se\s+rapporte(?:nt)?\s+à"
    r"|similaires?\s+à|(?:qui\s+)?ressemble(?:nt)?\s+à|me\s+rappelle(?:nt)?"
)
# "the", "my", and "the topic of", "the ideas in": words between the phrase and the note it names
_DETERMINER = (
    r"(?:(?:the|my|el|la|los|las|mi|mis)\s+)?"
    r"(?:(?:topic|subject|theme|ideas?|contents?|tema)\s+(?:of|in|de|en)\s+(?:(?:the|my|el|la|mi)\s+)?)?"
)
_NOTE = r"\[\[(?!\s*\]\])[^\[\]\n]+?\]\]"
# Times that "this" names at the end of a question ("…relate to this quarter"): no note.
_TIMES = "|".join(
    sorted(
        {"day", "week", "weekend", "month", "quarter", "year", "morning", "afternoon", "evening", "night", "time"}
        | {"season", "semester", "term", "decade", "period", "sprint"}
        | set(SEASONS)
        | set(MONTH_NAMES)
        | set(WEEKDAYS),
        key=len,
        reverse=True,
    )
)
# What "the … I have open" or "the … I'm reading" names: a note ("the plugin I have open", "the
# snippet I'm reading"), not the vault, a folder or several files, which are open too. ("The team I'm
# on", "the course I'm in" name none: with "in" and "on" only a note, page or file is the open note.)
_THING = r"(?!(?:(?:vault|folder|window|app)s?|(?:file|note|page|tab)s)(?![\w-]))[^\W\d_]+"
# "this note", "this project", "the note I have open", "esta nota", "este proyecto"; "this" and "esto"
# alone, and "this talk", "this setup", "this plugin note" (any thing, not a time), only at the end of
# a clause
_OPEN_NOTE = (
    r"(?:this|esta|este)\s+(?:[^\W\d_]+\s+)?(?:note|project|page|idea|book|file|one|draft|essay|nota|proyecto"
    r"|p[aá]gina|libro|archivo|entrada)(?![\w-])"
    r"|(?:this|esto)(?=\s*(?:[?.!,;:)]|$))"
    rf"|this\s+(?!(?:{_TIMES})(?![\w-]))[^\W\d_]+(?:\s+(?:note|page|file))?(?=\s*(?:[?.!,;:)]|$))"
    rf"|the\s+(?:[^\W\d_]+\s+)?{_THING}\s+(?:I\s+have|that's|that\s+is)\s+open(?:\s+here)?(?![\w-])"
    rf"|the\s+(?:[^\W\d_]+\s+)?{_THING}\s+(?:I'm|I\s+am)\s+(?:looking\s+at|reading|writing)(?![\w-])"
    r"|the\s+(?:[^\W\d_]+\s+)?(?:note|page|file)\s+(?:I'm|I\s+am)\s+(?:in|on)(?:\s+(?:open|now))?(?![\w-])"
    r"|the\s+(?:open|current)\s+(?:note|page|file)(?![\w-])"
    r"|la\s+nota\s+(?:abierta|actual|que\s+tengo\s+abierta)(?![\w-])"
    r"|(?:diese[rmn]?|dieses)\s+(?:Notiz|Seite|Projekt|Projekts|Buch|Idee|Datei)(?![\w-])"
    r"|(?:cette|ce)\s+(?:note|page|projet|livre|idée|fichier)(?![\w-])"
)
_CONNECTION_RE = re.compile(
    rf"(?<![\w])(?P<phrase>{_PHRASE})\s*{_DETERMINER}(?:(?P<note>{_NOTE})|(?P<open>{_OPEN_NOTE}))",
    re.IGNORECASE,
)
# The seed before the verb: "what does [[X]] remind me of?", "where could this book help?"
_SUBJECT = _OPEN_NOTE.replace(r"(?=\s*(?:[?.!,;:)]|$))", "")
_INVERTED_RE = re.compile(
    rf"(?<![\w])(?:does|do|did|could|can|might|would|will)\s+{_DETERMINER}(?:(?P<note>{_NOTE})|(?P<open>{_SUBJECT}))"
    rf"\s+(?P<phrase>remind\s+(?:me|you)\s+of|relate\s+to|connect\s+to|connect\s+with|help(?:\s+with)?|build\s+on)(?![\w])",
    re.IGNORECASE,
)
# Chinese and Japanese put the relation after the note: "与[[X]]相关的笔记", "和[[X]]有关的",
# "[[X]]に関連するノート", "このノートに似たもの"; and "this note" is "这篇笔记", "このノート".
_CJK_OPEN_NOTE = (
    r"(?:这|此|当前|目前)(?:篇|个|条|份)?(?:笔记|项目|页面|文件|想法|书)|我(?:正在看|打开)的(?:这篇)?笔记"
    r"|(?:この|今の|開いている|現在の)(?:ノート|ページ|プロジェクト|ファイル|本)"
)
_CJK_RELATION = (
    r"相关|有关(?:系|联)?|相似|类似|相近|关联|相连|有联系|联系"
    r"|に関連(?:する|した|している|がある)?|と(?:の)?関連(?:する|した|している|がある|のある)?"
    r"|と関係(?:する|のある|がある|している)?|に関係(?:する|のある|がある)?|に似(?:ている|た|てる)"
    r"|と(?:つながる|繋がる|つながっている|繋がっている)"
)
_CJK_CONNECTION_RE = re.compile(
    rf"(?P<lead>与|和|跟|同|跟我的|和我的)?\s*(?:(?P<note>{_NOTE})|(?P<open>{_CJK_OPEN_NOTE}))\s*(?P<phrase>{_CJK_RELATION})"
)
_TARGET_RE = re.compile(r"\[\[([^\[\]|#\n]+?)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")

# Who asks for things. Asking words are a closed class, unlike the phrases of a relation: the last one
# before the relation says whether the question wants notes ("what", "which", "anything", "where
# else", "notes" but not "this note") or asks how, why, when or whether something holds. A clause
# with none ("do I like [[X]]?", "is [[X]] related to [[Y]]?") asks for nothing either, unless the
# relation opens it ("alternatives to [[Readwise]] for highlights").
_NOT_AFTER = "".join(rf"(?<!\b{w}\s)" for w in ("this", "that", "the", "these", "those", "my", "your", "its"))
_ASKS_THINGS = (
    r"what(?:'s|’s|s)?|which|where|anything|something|everything|other|others|else|elsewhere"
    r"|any(?!\s+(?:way|chance|reason|sense|point)\b)"
    rf"|{_NOT_AFTER}(?:notes?|ideas?|pages?|entries|things|thoughts|files)"
    r"|qué|cu[áa]l(?:es)?|algo|d[óo]nde|otr[oa]s?|notas"
    # (German "was", not English "was [[X]] …?", "was it …?")
    r"|was(?!\s+(?:I|it|this|that|there|the|my|a|an|he|she|they|we|you)\b|\s*\[\[)"
    r"|welche[snmr]?|etwas|wo|andere[nmrs]?|notizen|ideen"
    r"|qu['’]est-ce|quoi|quel(?:le)?s?|quelque\s+chose|o[ùu]|autres?"
)
_ASKS_OTHERWISE = (
    r"how|why|when|whether|if|por\s+qu[ée]|c[óo]mo|cu[áa]ndo|si|wie|warum|wann|ob"
    r"|comment|pourquoi|quand|est-ce\s+que|est-ce\s+qu['’]"
)
_ASKER_RE = re.compile(
    rf"(?<![\w'’-])(?:(?P<other>{_ASKS_OTHERWISE})|(?P<thing>{_ASKS_THINGS}))(?![\w'’-])", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[.!?;:\n¿¡。！？；]")
# Chinese and Japanese: a question word for things before the relation, or the things asked for
# right after it ("…相关的想法", "…に関連するノート"); "为什么" asks why, "吗"/"か" whether.
_CJK_ASKS_THINGS = re.compile(r"(?<!为)(?:哪|什么|啥)|有没有|どれ|どの|どんな|(?<!な)何(?!故)")
_CJK_THINGS_AFTER = re.compile(r"\s*(?:的|[^\W\d_吗嘛呢吧かねよ])")
# Likeness ("relates to", "similar to", "reminds me of"): what it links are other notes. A role ("help",
# "instead of", "examples of") may be filled by the seed itself; and a seed that plays it ("what can
# [[X]] help with?", "what does [[X]] build on?") is what the question is about.
_ROLE = re.compile(r"help|ayud|instead|alternativ|alongside|example|illustrat|applied|used|practice", re.IGNORECASE)
_SUBJECT_ROLE = re.compile(r"help|build", re.IGNORECASE)
# "What else…", "which other notes…", "elsewhere": the seed is not among what is asked for.
_OTHERS = re.compile(
    r"(?<![\w-])(?:else|other|others|otr[oa]s|más|sonst|andere[nmrs]?|autres?)(?![\w-])", re.IGNORECASE
)
_ELSEWHERE = re.compile(r"(?<![\w-])(?:elsewhere|anderswo|ailleurs)(?![\w-])", re.IGNORECASE)


@dataclass(frozen=True)
class ConnectionAsk:
    """A question about what connects to a seed note."""

    phrase: str  # the words that made it one, as written ("connect to")
    seed_mention: str | None  # the `[[Note]]` naming the seed, as written; None: the open note
    seed_name: str | None  # the name inside it ("Launch Tidepool app")
    text: str  # the question without the connection words and the seed: "which ideas from March?"
    # The seed may hold the answer too ("what could help with [[Back pain]]?"): its best passages are kept
    keeps_seed: bool = False
    asked: str = ""  # the question as written, the seed named plainly: what its own passages are searched for
    said: str = ""  # the words read as the relation and its seed, as written ("relates to this project")

    @property
    def open_note(self) -> bool:
        return self.seed_mention is None


def find_connection(question: str) -> ConnectionAsk | None:
    """The connection a question asks about, or None when it asks none (then any `[[Note]]` in it
    is a scope, as before)."""
    for match, inverted in _candidates(question):
        if not _asks_for_things(question, match, inverted):
            continue
        # "what else…", "which other notes…" (before the relation), "…elsewhere in my notes" (anywhere)
        others = bool(_OTHERS.search(_clause_before(question, match.start())) or _ELSEWHERE.search(question))
        phrase = " ".join(match["phrase"].split())
        if inverted and _SUBJECT_ROLE.search(phrase) and not others:
            continue  # "what can [[X]] help with?": what X itself does (but "where else could this book help?")
        note = match["note"]
        name = None
        if note is not None:
            target = _TARGET_RE.fullmatch(note)
            name = target[1].strip() if target else note.strip("[]")
        # What is left is what else the question asks (its time, its scope, a topic: "…about pricing").
        text = question[: match.start()] + " " + question[match.end() :]
        text = re.sub(r"\s+([?.!,;:？。！，])", r"\1", " ".join(text.split()))
        keeps = name is not None and bool(_ROLE.search(phrase)) and not others
        asked = question.replace(note, name, 1) if note is not None and name is not None else question
        return ConnectionAsk(phrase, note, name, text, keeps, asked, " ".join(match[0].split()))
    return None


def _candidates(question: str) -> list[tuple[re.Match[str], bool]]:
    """Every place the question puts a relation next to a seed, in order; True for "does [[X]] …"."""
    found = [(m, False) for m in _CONNECTION_RE.finditer(question)]
    found += [(m, True) for m in _INVERTED_RE.finditer(question)]
    found += [(m, False) for m in _CJK_CONNECTION_RE.finditer(question)]
    return sorted(found, key=lambda pair: pair[0].start())


def _asks_for_things(question: str, match: re.Match[str], inverted: bool) -> bool:
    """Whether the clause the relation is in asks for things: its last asking word before the
    relation (or, in Chinese and Japanese, a question word for things or the things right after).
    A clause the relation opens asks for them too; one that opens with "does [[X]] …" asks whether."""
    if "lead" in match.re.groupindex:  # (the Chinese and Japanese form)
        before = _clause_before(question, match.start())
        return bool(_CJK_ASKS_THINGS.search(before) or _CJK_ASKS_THINGS.search(question[match.end() :])) or bool(
            _CJK_THINGS_AFTER.match(question, match.end())
        )
    before = _clause_before(question, match.start())
    if not before.strip():
        return not inverted  # the relation opens the clause: "similar to [[X]]", "alternatives to [[X]] for …"
    askers = list(_ASKER_RE.finditer(before))
    return bool(askers) and askers[-1]["thing"] is not None


def _clause_before(question: str, end: int) -> str:
    """The words of the clause before `end`, the names inside `[[…]]` blanked (a "." in a name ends
    no clause, and a name asks nothing)."""
    blanked = re.sub(_NOTE, lambda m: "[[" + " " * (len(m[0]) - 4) + "]]", question[:end])
    ends = [m.end() for m in _CLAUSE_END.finditer(blanked)]
    return blanked[ends[-1] if ends else 0 :]
