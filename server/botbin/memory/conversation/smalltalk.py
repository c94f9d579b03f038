"""Small talk: turns that only greet, thank, acknowledge, take leave or offer help are not memory (pure).

"Good morning! How can I help today?", "thanks!", "ok sounds good", "Glad I could help. Let me know if there's
anything else." hold nothing to recall, yet they have enough words for the admission gate (gate.py) to let
them in. A sentence is small talk when it is made, word by word, of phatic units only (Malinowski's phatic
communion: talk that keeps the contact, not the content): greetings, thanks, acknowledgements, leave-takings,
pleasantries, the assistant's offers of help, laughter, fillers ("so", "really") and at most one name said to
the other ("Thanks, Sam!"). A turn is small talk when every sentence is; a turn with one sentence of content
keeps it ("Thanks! The wifi password is kestrel42." is memory), and ``strip_small_talk`` drops the rest from
its bullet. Words are matched whole, so anything with content ("the invoice", "Berlin", "at 9") is never small
talk; a sentence of digits alone is content too.
"""

from __future__ import annotations

import re

from botbin.directives.lexer import sentence_spans

#: Phatic phrases, matched as whole word sequences (any case, apostrophes straightened, punctuation ignored).
PHRASES = """
hi|hello|hey|hiya|howdy|yo|greetings|hi there|hello there|hey there|hey hey|hello again|hi again|hey again
good morning|good afternoon|good evening|good day|morning|afternoon|evening|gm|welcome back|welcome
nice to meet you|nice to see you|good to see you|long time no see|how are you|how are you doing|how r u
how's it going|how is it going|how are things|how have you been|how's your day|how is your day|how's everything
how was your weekend|how was your day|what's up|whats up|sup|i'm good|i'm fine|i'm well|i am good|doing well
doing good|not bad|can't complain|good and you|and you|you
thanks|thank you|thx|ty|tysm|thank u|thanks so much|thanks a lot|thanks a ton|thanks a bunch|thank you so much
thank you very much|many thanks|much appreciated|appreciate it|i appreciate it|really appreciate it|appreciated
cheers|thanks again|thank you again|that was helpful|that was really helpful|that was very helpful|that helps
that helped|that's helpful|this is helpful|very helpful|super helpful|so helpful|really helpful|helpful
you're the best|you rock|you're a star|you're awesome|legend|lifesaver|you're a lifesaver
ok|okay|k|kk|okey|okie|okie dokie|okey dokey|okey dokie|alright|all right|sure|sure thing|for sure|yes|yeah|yep
yup|ya|yes please|yes sure
no|nope|nah|no thanks|no thank you|right|fine|cool|cool cool|nice|great|perfect|awesome|excellent|wonderful
lovely|neat|sweet|brilliant|fantastic|amazing|splendid|super|good|very good|great stuff|good stuff|nice one
good one|got it|gotcha|understood|noted|roger|roger that|copy|copy that|will do|on it|makes sense
that makes sense|sounds good|sounds great|sounds perfect|sounds fine|sounds like a plan|fair enough|no problem
no problems|np|no worries|not a problem|no prob|of course|certainly|absolutely|definitely|exactly|indeed|agreed
true|done|all good|all set|go ahead|go for it|great question|good question|interesting|i see|i understand
that's great|that's good|that's nice|that's cool|that's awesome|that's fine|that's perfect|that's amazing
that's wonderful|that's fair|that works|works for me|this works|it works|good to know|good to hear|glad to hear it
glad to hear that|love it|love that|lol|lmao|rofl|haha|hahaha|hehe|heh|ha|wow|whoa|oops|yay|woohoo|phew
uh huh|mhm|hmm|hm|oh|ah|aha|ooh
you're welcome|you are welcome|my pleasure|the pleasure is mine|pleasure|anytime|any time|not at all
don't mention it|no problem at all|glad i could help|glad to help|happy to help|glad it helped|happy i could help
always happy to help|i'm happy to help|i'm glad i could help|i'm glad that helped|glad that helped|happy to
with pleasure|you got it|here you go|there you go|here it is
bye|bye bye|goodbye|good bye|see you|see ya|see you later|see you soon|see you tomorrow|see you next time|later
talk later|talk soon|talk to you later|talk to you soon|talk tomorrow|speak soon|catch you later|take care
have a good day|have a nice day|have a great day|have a good one|have a great one|have a nice one
have a great weekend|have a nice weekend|have a good weekend|have a good evening|have a lovely evening
have a great evening|have a nice evening|enjoy your day|enjoy your evening|enjoy your weekend|enjoy|good night
night|gn|sleep well|until next time|until tomorrow|till tomorrow
"""
_NICE = "good|nice|great|wonderful|lovely|fantastic|pleasant|amazing|beautiful|productive|relaxing|safe|happy|fun"
_TIMES = "day|one|weekend|evening|night|week|morning|afternoon|time|trip|flight|holiday|holidays|vacation|rest"
#: Offers and closings an assistant makes, with their optional parts.
TEMPLATES = (
    r"(?:how|what) (?:can|may|could|shall) i (?:help|assist|do for)(?: you)?(?: with)?(?: today| now| next| this \w+)?",
    r"(?:what|how) (?:else )?can i (?:help you with|help with|do for you)(?: today| now)?",
    r"(?:is there )?anything else(?: (?:i|that i) (?:can|could|may) (?:help|assist|do)(?: you)?(?: with)?(?: for you)?"
    r"| you need| you'd like| today| for now)?",
    r"(?:just |please |do )?(?:let me know|feel free to (?:ask|reach out|let me know|ping me|get in touch)"
    r"|don't hesitate to (?:ask|reach out|get in touch)|just ask|ask away)"
    r"(?: if| when| whenever)?(?: you| there's| there is)?(?: (?:have|need|want|get|think of))?"
    r"(?: any| more| other| further){0,2}(?: anything)?(?: else)?(?: questions?| help| changes| tweaks)?"
    r"(?: (?:i|we) (?:can|could) (?:help|assist|do)(?: you)?(?: with)?(?: for you)?)?(?: later| again| at all)?",
    r"(?:i )?hope (?:this|that|it) (?:helps|helped|was helpful|is helpful|makes sense)",
    r"i'm (?:always )?(?:here|around|available)(?: (?:to help|if you need (?:me|anything(?: else)?|help|more help)"
    r"|for you|whenever you need me|if anything comes up))?",
    r"thanks? (?:you )?(?:so much |a lot |again )?for (?:the|your|that|this|all the|letting me know|asking|"
    r"checking|the help|your help|your patience|reaching out|the update|the info)(?: \w+)?",
    r"(?:i'm |i am )?glad (?:i|we) could help",
    r"(?:i'm |i am |so )?glad (?:that|it|this) (?:worked|helped|helps|works|worked out)",
    rf"(?:have|enjoy) (?:an?|your|the) (?:(?:{_NICE}) )?(?:{_TIMES})",
)
#: Words that may pad small talk ("Thanks so much, really!") without being content.
FILLERS = frozenset(
    [
        "so",
        "very",
        "really",
        "much",
        "too",
        "again",
        "all",
        "and",
        "but",
        "well",
        "then",
        "just",
        "oh",
        "ah",
        "also",
        "a",
        "lot",
        "lots",
        "as",
        "always",
    ]
)
_PHRASES = sorted(
    {p.strip() for line in PHRASES.split("\n") for p in line.split("|") if p.strip()}, key=len, reverse=True
)
_UNIT = re.compile(r"(?:" + "|".join(TEMPLATES) + "|" + "|".join(re.escape(p) for p in _PHRASES) + r")(?= |$)")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'"})


def _words(sentence: str) -> list[tuple[str, bool]]:
    """The sentence's words, casefolded, with whether each was capitalized (a name said to the other)."""
    return [(m.group(0).casefold(), m.group(0)[:1].isupper()) for m in _WORD.finditer(sentence.translate(_QUOTES))]


def is_small_talk_sentence(sentence: str) -> bool:
    """True when ``sentence`` is made of phatic units and fillers only (and at most one name after the first word);
    True for a sentence without a letter or a digit (an emoji, "..."), False for one with digits and no words."""
    words = _words(sentence)
    if not words:
        return not any(c.isdigit() for c in sentence)
    text = " ".join(w for w, _ in words)
    capital = {i for i, (_, cap) in enumerate(words) if cap and i > 0}
    pos, index, names = 0, 0, 0
    while pos < len(text):
        match = _UNIT.match(text, pos)
        word = text[pos:].split(" ", 1)[0]
        if match is not None and match.end() > pos:
            end = match.end()
        elif word in FILLERS:
            end = pos + len(word)
        elif index in capital and names == 0:
            names, end = 1, pos + len(word)  # "Thanks, Sam!", "Hi Sam, how's it going?"
        else:
            return False
        index += text[pos:end].count(" ") + 1
        pos = end + 1
    return True


def is_small_talk(text: str) -> bool:
    """True when every sentence of ``text`` is small talk (botbin's one splitter, directives/lexer.py)."""
    spans = sentence_spans(text)
    return bool(spans) and all(is_small_talk_sentence(text[s:e]) for s, e in spans)


def strip_small_talk(text: str) -> str:
    """``text`` without its small-talk sentences ("Thanks! The wifi password is kestrel42." -> the second), on one
    line; ``text`` itself when nothing else is left."""
    kept = [text[s:e] for s, e in sentence_spans(text) if not is_small_talk_sentence(text[s:e])]
    return " ".join(" ".join(kept).split()) or text
