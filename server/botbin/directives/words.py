"""Word lists the deontic lexer reads: imperative verbs, subjects, auxiliaries, irregular participles.

Hand-curated for instruction-style English (agent rules, READMEs, help pages). A verb that more often
opens a descriptive sentence as a noun ("Note", "See also", "Thanks") is left out on purpose.
"""

from __future__ import annotations

#: Base-form verbs that open an imperative sentence ("Use tabs.", "Run the tests before pushing.").
IMPERATIVE_VERBS = frozenset(
    """
accept access acknowledge add address adjust adopt align allow announce answer append apply approve archive
ask assign assume attach avoid bake batch be become begin bind block boil book bootstrap bring browse build
bump cache calculate call cancel capitalize capture catch change check chill choose chop cite clarify clean
clear click clone close collapse collect combine comment commit compare compile complete compress configure
confirm connect consider contact continue convert cook cool copy correct count create cut debug decide declare
decline define delay delete deploy describe deselect detect disable disconnect dismiss display do document
double-check download draft drag drain drop duplicate edit email embed enable encode encrypt enforce ensure
enter escape estimate evaluate examine exclude execute exit expand explain export extract favor favour feed
fetch file fill filter find finish fix flag flush focus fold follow force format forward freeze fry generate
get give go grant grate handle have heat help hide highlight hold hover identify ignore implement import
include increase indent index inform initialize insert inspect install integrate introduce invoke isolate keep
kill knead launch leave link lint list load lock log look lowercase maintain make manage map mark measure
mention merge migrate minimize mix modify monitor mount move name navigate notify obey omit open optimize
organize override pack pass paste pause pay peel pick pin ping plan poll post pour precede prefer prefix
preheat prepare present preserve press prevent print prioritize proceed process prompt protect prove provide
prune publish pull push put query quote raise read rebase rebuild recheck record redact reduce refactor refer
reference refrain refresh refuse register reindex reject release reload remain remember remind remove rename
reorder repeat rephrase replace reply report request require rerun reset resize resolve respect respond
restart restore restrict resume retain retry return reuse revert review rewrite right-click rinse roast rotate
run sanitize save say scan schedule scroll search season select send separate serve set share shorten show
shut sign simmer simplify skip sleep slice soak sort specify split squash stage start stay stick stir stop
store strip submit suggest summarize supply support suppress swap switch sync tag take talk teach tell test
think throw tidy toggle touch trace track translate treat trigger trim truncate trust try turn type uncheck
undo uninstall unlock unpin update upgrade upload uppercase use validate verify view visit wait warn wash
watch water whisk wipe wrap write cc bcc dm preview group
""".split()
)
#: British spellings of the -ize verbs ("Summarise", "Prioritise").
IMPERATIVE_VERBS = IMPERATIVE_VERBS | frozenset(v[:-3] + "ise" for v in IMPERATIVE_VERBS if v.endswith("ize"))

#: Pronouns and determiners after which "always"/"never"/"don't" describe someone's habit, not a rule.
THIRD_PERSON = frozenset(
    "i he she it they this that these those there which who one someone everyone nothing something everything".split()
)
#: Subjects that make a modal or adverb a rule for the reader: "you must", "we never".
RULE_SUBJECTS = frozenset("you u".split())
#: Finite verbs that, right after a sentence-initial noun, show it was a noun phrase ("Test results were ...").
FINITE_AUX = frozenset(
    "is are was were has had will would can could 's does did shall might isn't aren't wasn't weren't".split()
)
#: Words after a sentence-initial verb that show the verb is a noun: "Use of eval is forbidden".
NOUN_MARKERS = frozenset("of is are was were has had will would can could 's".split())
#: Openers skipped before looking for the rule: "Please answer in English", "Also, never push to main".
SKIP_OPENERS = frozenset(
    "please kindly also then and so just now first second third next finally additionally "
    "again but or to plz pls".split()
)
#: Hedges that turn an imperative into advice: "Perhaps use a dataclass here."
HEDGES = frozenset("perhaps maybe possibly probably ideally preferably".split())
#: Adverbs skipped when looking for a cue's subject or its "is": "It's usually better to", "We strongly recommend".
ADVERBS = frozenset(
    "usually generally often normally almost probably strongly really also always never just "
    "still then highly definitely absolutely typically".split()
)
#: Verbs of reported speech: a rule after them is someone's words, not the note's ("Marco said we should ...").
REPORTING = frozenset(
    "said says told tells asked asks thinks thought suggested suggests wrote writes mentioned "
    "argued argues claimed claims believes believed insisted warned states stated according "
    "lists listed "
    "describes described explains explained covers means meant enforces enforced insists warns".split()
)
#: Words that open a subordinate clause; the rule is after its comma ("If the build fails, revert it").
CLAUSE_OPENERS = frozenset(
    "if when whenever before after once unless while until to for in on with during "
    "where as since because otherwise instead by between from at whether".split()
)
#: Irregular past participles, for passive rules ("Secrets must be kept out of git").
IRREGULAR_PARTICIPLES = frozenset(
    """
been begun bitten blown born bought brought built caught chosen come cut done drawn driven eaten fallen felt
fought found forgotten frozen given gone grown heard held hidden hit hung kept known laid led left lent let
lost made meant met paid put quit read run said seen sent set shaken shown shut sold spent split spoken spread
stolen stood struck stuck sung sworn taken taught thrown told understood undone woken won worn written
""".split()
)
#: Verbs used only in the past tense that disqualify "We always used tabs" (regular -ed forms are caught by suffix).
IRREGULAR_PAST = frozenset(
    """
was were did had went came made took gave got kept left ran said saw sent set told thought wrote began broke
brought built bought caught chose drew drove ate fell felt fought found forgot froze grew heard held hid knew
led lost meant met paid put read rode rose sat sold spent spoke stood stole stuck swore taught threw understood
woke won wore
""".split()
)
#: Verbs ending in "ed" that are base forms, not past tense.
ED_BASE_FORMS = frozenset("need embed feed seed proceed succeed exceed shed bleed speed breed heed weed".split())
#: Words after a sentence-initial "No" that make it a reply or a fact, not a ban ("No one knows", "No, thanks").
NO_NOT_BAN = frozenset("one longer doubt idea matter way problem problems worries thanks sir luck need".split())
#: Finite verbs that make a "No ..." sentence a statement ("No cache is used"), not a verbless ban.
STATEMENT_VERBS = frozenset(
    "is are was were has have had exists exist will did does do can could should would seems seem appears appear "
    "got found remains remain works work".split()
)
#: Words that open a sentence before a determiner without being a command ("Today the build broke").
NOT_IMPERATIVE = frozenset(
    "today yesterday tomorrow tonight sometimes here there now then later overall also once "
    "meanwhile finally usually maybe perhaps what all both in on at by for from with about "
    "into over under after before since until if when whenever while because as of to and or "
    "but so yet not no nor unless once where whether although though how why".split()
)
#: Determiners that follow an imperative verb: an unknown word before one opens a command ("Preheat the oven").
DETERMINERS = frozenset("the a an your all any every each this these those our my".split())
