"""The words compaction's classifier reads (:mod:`hippo.core.compaction.kinds`): what settles a
choice, what asks, what only acknowledges or reports progress, what proposes, what changes an
earlier decision. Each is a regular expression over a message or one of its sentences, in English
with the commonest forms in Spanish, German, French and Russian; tuned on the development half of
``bench/labelled_sessions`` (BENCHMARKS.md, "What a session keeps")."""

from __future__ import annotations

import re

# Settling a choice, at a word boundary, in a sentence that is not a question.
DECISION = re.compile(r"""(?ix)
    \b(?:decision|decided|final\ call|settled\ on|we\ settle\ on|going\ with|go\ with|goes\ with|go\ for|
       let'?s\ (?:go|use|do|keep|ship|take|pick|stick\ with|move|drop|cut|skip|switch|make|put|pin)|
       (?:we'?ll|we\ will)\ (?:go\ with|use|ship|keep|do|take|launch|move|drop|cut|skip|switch|stick|pin)|
       we\ (?:chose|picked|went\ with|agreed)|i\ (?:chose|picked|went\ with|opted\ for|settled\ on)|
       agreed\b|approved|(?:do|ship|use|merge|deploy)\ it\b|
       (?:pin|keep|use|drop|cut|scrap|kill)\ (?:it|them|the|that|this)\b|
       stick\ with|switch(?:ing)?\ to|
       \w+\ it\ is\b|\w+\ then(?:[.!,:]|\s*$)|one\ (?:change|fix|correction)\s*:|
       \b(?:is|should\ be|goes\ to|stays(?:\ at)?)\ \S+\ not\ \S+|(?:goes|go)\ to\ [$€£]?\d|stays\ [$€£]?\d|
       (?:^|[.;:,]\s*)\w+\ (?:=|→|->)\ [^\W\d_]|we\ said\ yes|i\ (?:swapped|replaced|switched)\b|
       (?:^|\.\s)(?:use|pin|keep|drop|cut|scrap|narrow|move|go|do|make|put|set|halt|abort|freeze|promote|pause|
       resume|leave|hold|cancel|skip|ship|release|revert|roll\ back|rollback)\b)
    |^\s*[A-D][.)]\s
    |^\s*(?:ok(?:ay)?[,.]?\s+)?(?:option\ )?[a-d1-4][.)]?\s+(?:do\ it|go|please|that\ one)\b
    |\b(?:decidido|decidimos|vamos\ con|nos\ quedamos\ con|elegimos|me\ quedo\ con|lo\ descarto|lo\ dejamos|
       quedamos\ en|ya\ est[áa])\b
    |\b(?:entscheidung|entschieden|wir\ nehmen|nehmen\ wir|machen\ wir|bleiben\ bei|festgelegt|
       wir\ gehen\ mit)\b
    |\b(?:décidé|décision|on\ part\ sur|on\ garde|on\ prend)\b
    |(?:решил|решили|решение|берём|берем|выбрали|договорились)
""")
# The assistant choosing for the user: "I'll write it as a command rather than a migration".
CHOOSES = re.compile(r"(?i)(?:^|\b)(?:i'?ll|i\ will|i'?m\ going\ to|i\ went\ with|i'?ve\ gone\ with|^\w+ing\b)[^.?!]*"
                      r"\b(?:rather\ than|instead\ of)\b", re.VERBOSE)
QUESTION = re.compile(r"\?\s*(?:[\W_]*)$")
SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# Short progress, greetings and trivia that say nothing to keep ("Done.", "Running the tests now.").
TRIVIAL = re.compile(r"""(?ix)^\W*(?:(?:ok(?:ay)?|sure|alright|right|great|good|perfect|vale|perfecto|genial)
    [,.!]?\s+)?(?:
    done|on\ it|ack|brb|back|night|good\ night|lunch|working\ on\ it|will\ do\b.{0,20}|one\ (?:sec|moment)|moment|
    (?:let\ me|i'?ll)\ (?:check|look|ask)\b(?:\ \S+){0,4}|will\ report\ back|report\ back\ (?:later|soon)|
    ich\ schau\w*\ (?:mal|nach)\b.*|lo\ miro|te\ digo\b.*|
    happy\ to\ help\b.*|glad\ i\ could\ help\b.*|
    hecho|listo|apuntado|erledigt|fertig|c'est\ fait|
    (?:hi|hello|hey|hola|hallo|bonjour)\b(?:\ \S+){0,3}|
    (?:you'?re\ welcome|de\ nada|gern(?:e)?\ geschehen|good\ luck|have\ a\ (?:good|great|nice)|enjoy|take\ care|
       mucho\ [áa]nimo|suerte|viel\ erfolg|bonne\ chance)\b.*
    )\W*$""")
# The assistant saying what it is about to do or just did, briefly ("Running the tests now.",
# "Let me check the invoices.", "Added to the plan.", "Lo miro.").
PROGRESS = re.compile(r"""(?ix)^\W*(?:(?:ok(?:ay)?|sure|alright|right|great|good|perfect|vale|perfecto|genial)
    [,.!]?\s+)?(?:
    (?:let\ me|i'?ll|i\ will)\ (?:check|look|see|take\ a\ look|run|try|dig|find|pull|grab|confirm|ask)\b.*|
    (?:that|this)\ (?:pattern\ )?rings\ a\ bell.*|
    [\w-]+ing\b(?:\ \S+){0,14}|again|full\ suite|
    (?:added|saved|noted|updated|applied|sent|changed|done|fixed|promoted|deployed|merged|reverted|paused|
       resumed|halted|restarted|rolled\ back)\b(?:\ [^\s._/\d]+){0,3}|
    edited\ \d+\ (?:line|file)s?|
    (?:lo|la|los|las|les|le)\ \w+o\b(?:\ \S+){0,4}|miro|busco\b(?:\ \S+){0,5}|confirmo|escribo\b.*|
    enviad[oa]s?\b.*|mache\ ich|schaue?\ ich\b.*|ich\ (?:schau|pr[üu]f)\w*\b.*
    )\W*$""")
CLOSING = re.compile(r"(?i)^\W*(?:thanks?|thank\ you|thx|ty|gracias|danke|merci|cheers)\b.{0,60}$", re.VERBOSE)
# What asks for work or an answer: a question, a polite or modal request, an imperative opening a
# sentence, a problem reported ("every call comes back 401").
REQUEST = re.compile(r"""(?ix)
    \?|(?:^|[.!]\s+|^(?:ok|okay|nice|great|cool|good|right|hmm|so|and|also|now|then|perfecto|vale|genial)[,.!]?\s+)
    (?:please|pls|can|could|would|will|should|shall|what|why|how|when|where|which|who|
    add|fix|make|write|check|run|look|find|show|give|tell|help|update|remove|delete|create|build|set|
    change|rename|try|explain|review|draft|book|send|compare|list|summari[sz]e|investigate|implement|
    refactor|deploy|test|prepare|organi[sz]e|remind|schedule|start|stop|revert|roll|open|commit|push|merge|
    search|get|put|draft|plan|figure|sort|clean|walk|now|next|
    puedes|podr[ií]as|ay[uú]dame|quiero|necesito|busca|mira|haz|prepara|dime|avisa|conf[ií]rma\w*|escribe|
    kannst|k[öo]nntest|bitte|mach|schau|pr[üu]f\w*|zeig)\b
    |\b(?:i\ (?:want|need|would\ like|'d\ like)|we\ (?:need|should|must|have\ to)|can\ you|could\ you|
       please|help\ me|let\ me\ know|any\ idea|porfa|por\ favor|bitte|problem|error|fails?|failing|broken|
       doesn'?t\ work|not\ working|comes?\ back\ \d{3}|keeps?\ \w+ing|rejects?|crash\w*)\b
""")
CHOICE = re.compile(r"""(?ix)\b(?:or|shall\ i|should\ i|want\ me|do\ you\ want|would\ you\ like|which|prefer\w*|
    option|how\ many|how\ much|what\ (?:numbers?|limits?|values?|size|date|day|time)|when\ should|
    (?:a|b|1|2)\)|o|oder|welche\w*|cu[áa]l\w*|qu[ée]\ (?:d[ií]a|fecha|hora)|prefier\w*|ou|quel\w*)\b""")
# An assistant message that proposes: a recommendation, alternatives, a list of options.
PROPOSES = re.compile(r"""(?imx)
    \b(?:i'?d|i\ would|i\ recommend|i\ suggest|recommend\w*|suggest\w*|alternatives?|either|options?|
       instead\ of|rather\ than|the\ safer|one\ approach|another\ (?:is|would)|we\ can\ \w+[^.?!]*\bor\b|
       the\ options\ are|te\ recomiendo|recomiendo|yo\ (?:har[íi]a|elegir[íi]a|ir[íi]a)|
       alternativa|opci[óo]n|ich\ w[üu]rde|empfehle|vorschlag|optionen|m[öo]glichkeiten|variante|
       je\ (?:recommande|propose))\b
    |^\s*(?:[-*•]|\d+[.)])\s+\S
""")
# An acknowledgement opening a message: "ok cool, ...", "genial, ...", "thx. ...".
LEAD = re.compile(r"(?i)^\W*(?:(?:ok(?:ay)?|cool|great|nice|good|perfect|thanks|thank\ you|thx|ty|amazing|genial|vale|"
                  r"gracias|haha\w*|omg|ha|hey|morning|brilliant|perfecto|uff|ugh|ah|oh|danke|passt|super|merci|"
                  r"good call|fine)\b[\s,.!]*)+")
# The assistant noting what was just said: "Noted, Thursday 14:00.", "Updated: Team $24/seat ...".
NOTED = re.compile(r"(?i)^\W*(?:noted|understood|updated|saved|mapped|got it|fixed in|changed|vale|apuntado|anotado|"
                    r"notiert|c'est noté)\b\s*[:,.]")


# A later decision that changes an earlier one says so ("actually", "switch to", "instead.").
CHANGE = re.compile(r"""(?ix)
    \b(?:actually|change\ of\ plans?|scratch\ that|on\ second\ thought|after\ all|no\ longer|not\ \w+\ any\ ?more|
       switch(?:ed|ing)?\ (?:to|back)|revert(?:ed|ing)?|chang(?:e|ed|ing)\ (?:it|that|this|the\ \w+)?\ ?to|
       mov(?:e|ed|ing)\ (?:it\ )?to|push(?:ed)?\ (?:it\ )?(?:back|to)|postpone[ds]?|reschedul\w*|
       (?:raise|lower|bump|increase|reduce|drop)(?:d|ed|s)?\ (?:it\ |the\ \w+\ )?to|make\ it|rather|
       instead(?!\ of)|new\ plan|updated?\ (?:plan|decision)|revis\w*|overrid\w*|replac\w*)\b
    |\b(?:en\ (?:vez|lugar)|mejor|cambi\w*|al\ final|stattdessen|doch|lieber|ge[äa]ndert|[äa]nder\w*|
       verschieb\w*|verschoben|plut[ôo]t|finalement|en\ fait)\b
    |(?:передумал|вместо|лучше|перенес)
""")
SMALL_TALK = re.compile(
    r"^\W*(hi|hello|hey|thanks|thank you|thx|ok|okay|sure|great|cool|nice|lol|haha|bye|goodbye|yes|no|yep|nope|"
    r"got it|sounds good|you're welcome|good (morning|night|evening|afternoon)|see you|take care|wow|awesome)"
    r"(\W+\w+)?\W*$", re.I)
# A reply pointing at one of the options offered: "the second one", "option B", "die zweite".
PICKS = re.compile(r"""(?ix)\b(?:first|second|third|last|former|latter|both|neither|either|option\ \w|
    the\ \w+\ one|[a-d]\)|erste\w*|zweite\w*|dritte\w*|beide|primer\w*|segund\w*|tercer\w*|ambos|
    premi[eè]re?|deuxi[eè]me)\b""")
# A user's message that opens on "then" picks what was just weighed: "Dann Schmidt.", "pues el 25".
THEN = re.compile(r"(?i)^\W*(?:(?:ok|okay|vale|gut|also|alors)\W+)?(?:dann|pues|entonces|alors)\b(?!\ nada)")
